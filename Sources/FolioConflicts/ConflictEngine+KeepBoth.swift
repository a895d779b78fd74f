import FolioCore

extension ConflictEngine {
    /// The `keepBoth` settlement: the version whose contents were made last (by lamport, then device) stays here and
    /// every other version becomes a new document named "NAME (conflict from DEVICE)", DEVICE being the one that made
    /// that version's contents ("another device" when its name is unknown).
    ///
    /// A resolution that kept a version does not make it newer, and a copy's identity derives from the document and
    /// the change that made the copied contents: so devices that settle one conflict at once, each from what it has
    /// received so far, keep the same version and make the same copies.
    ///
    /// - Returns: `nil` when nothing competes.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func settlementKeepingBoth<History: ConflictHistory<Model>>(
        in history: History, displayName: String, devices: [DeviceID: Device]
    ) throws(History.Failure) -> ConflictSettlement<Model>? {
        guard isInConflict else { return nil }
        var origins: [Change] = []
        for group in versions { origins.append(try Self.origin(of: group, in: history)) }
        let kept = origins.indices.max {
            origins[$0].headOrder < origins[$1].headOrder
        }!
        var copies: [ConflictCopy<Model>] = []
        for index in versions.indices where index != kept {
            let origin = origins[index]
            // The device's name, not its person: the copy's name is recorded, and every device makes the same copy.
            let deviceName = devices[origin.id.device].flatMap { $0.name.isEmpty ? nil : $0.name } ?? "another device"
            copies.append(
                ConflictCopy(
                    id: Self.copyIdentity(of: document, origin: origin),
                    name: "\(displayName) (conflict from \(deviceName))",
                    contents: versions[index].state))
        }
        let resolution = Resolution(
            strategy: .keepBoth, chosen: [versions[kept].head.hash],
            discarded: versions.indices.filter { $0 != kept }.map { versions[$0].head.hash })
        return ConflictSettlement(
            resolution: resolution, parents: settlementParents, state: versions[kept].state, copies: copies)
    }

    /// The identity of the copy of the contents `origin` made, kept apart from `document`: the first 16 bytes of the
    /// hash of both identities, the same on every device.
    public static func copyIdentity(of document: DocumentID, origin: Change) -> DocumentID {
        DocumentID(UUIDBytes(bytes: ContentHash(hashing: document.uuid.bytes + origin.hash.bytes).bytes.prefix(16)))
    }
}
