import FolioConflicts
import FolioCore
import FolioStore

extension Document {
    /// Settles the competing versions by a three-way merge from their common ancestor, as the conflict engine merges
    /// (`ConflictEngine.settlementByMerging(in:)`): three or more versions two at a time, the pair
    /// with the latest common ancestor first, and all at once from the ancestor they share when a pair does not merge
    /// cleanly.
    ///
    /// When everything merges, a resolution with the merged contents is recorded (strategy `merge`, every version
    /// chosen, none discarded). When some parts conflict, nothing is recorded: the result's `merged` holds what
    /// merged (and the first version's text where it did not) and its `conflicts` the parts for a person, who
    /// settles them with ``resolve(with:)``.
    ///
    /// When the versions differ only by how they were settled (resolutions of the same edits that came out
    /// differently, made by devices that merged apart), the version made last is kept instead, as ``resolve(_:)``
    /// with `.latest` would (a `latestWins` resolution, the others discarded).
    ///
    /// - Returns: the merge; `nil` when the model cannot merge or there is no conflict.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func resolveByMerging() throws(DocumentError) -> MergeResult<Model>? {
        try ensureEditable()
        try commit()
        try versionGroups()
        switch try tracking.conflicts.settlementByMerging(in: storedHistory) {
        case nil, .askResolver?:
            return nil
        case .awaitUser(let unmerged)?:
            return unmerged
        case .settle(let settlement)?:
            try carryOut(settlement)
            return MergeResult(merged: settlement.state, conflicts: [])
        }
    }

    /// Keeps the version whose contents were made last (by lamport, then device) here and turns every other version
    /// into a new document named "NAME (conflict from DEVICE)" in the same container, DEVICE being the one that
    /// made that version's contents (`ConflictEngine.settlementKeepingBoth(in:displayName:devices:)`).
    ///
    /// A resolution that kept a version does not make it newer, and a copy's identity derives from this document and
    /// the change that made the copied contents: so devices that settle one conflict at once, each from what it has
    /// received so far, keep the same version and make the same copies.
    ///
    /// - Returns: the identities of the new documents.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func resolveByKeepingBoth() throws(DocumentError) -> [DocumentID] {
        try ensureEditable()
        try commit()
        try versionGroups()
        guard
            let settlement = try tracking.conflicts.settlementKeepingBoth(
                in: storedHistory, displayName: info.displayName, devices: try knownDevices())
        else { return [] }
        try carryOut(settlement)
        return settlement.copies.map(\.id)
    }

    /// Applies the library's strategy for this type (or the app's resolver, which overrides it) to a conflict that
    /// just appeared, as the conflict engine decides (`ConflictEngine.nextAction(hasResolver:in:displayName:devices:)`).
    func applyConflictStrategy() throws(DocumentError) {
        guard state.contains(.inConflict), !state.contains(.editingDisabled) else { return }
        if let resolver = conflictResolver {
            let all = try versions()
            let contents: Model
            do {
                contents = try resolver(all)
            } catch let error as DocumentError {
                throw error
            } catch {
                throw DocumentError(
                    .invalidContents, "the custom conflict resolver of \(info.displayName) failed", cause: error)
            }
            try resolve(with: contents)
            return
        }
        guard tracking.conflicts.settlesWithoutUser(hasResolver: false) else { return }
        try ensureEditable()
        try commit()
        try versionGroups()
        let action = try tracking.conflicts.nextAction(
            hasResolver: false, in: storedHistory, displayName: info.displayName, devices: try knownDevices())
        if case .settle(let settlement)? = action { try carryOut(settlement) }
    }
}
