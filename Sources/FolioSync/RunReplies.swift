import FolioCore

extension SyncSession {
    /// The most changes a run this side writes holds (a receiver takes up to `SyncMessage.Limits.runChanges`).
    ///
    /// A run carries one signed head per device, which its receiver keeps to pass on with those changes. A relay that
    /// sends them on in format 2, in messages of a few hundred changes, gives a message without a head of its own
    /// the kept head nearest above it, and the receiver holds the message's changes until that head's change
    /// arrives: at most `StoreLimits.unvouchedChangesPerDocument` (4,096 by default) may so wait. Runs of 1,024
    /// changes keep every wait well within that, for a few heads more on the wire (about 170 bytes per device and
    /// run).
    package static let changesPerRun = 1_024

    /// Turns the result of a ``SyncAction/fetch(document:since:)`` into messages for a peer that reads message format
    /// 3: runs (``SyncMessage/run(_:)``), each with the heads ``fetched(_:heads:signing:of:)`` would give its
    /// changes, split so that the bound a receiver computes before decoding one
    /// (``ChangeRunMessage/decodedBound(knownDevices:)``) stays within half of
    /// ``SyncMessage/Limits/runDecodedBytes``. A change too large for any run travels alone as a `changes` message,
    /// and so do all of them when they cannot be written as runs (a parent the log does not hold).
    ///
    /// - Parameters:
    ///   - changes: in causal order, as the store returns them.
    ///   - heads: the document's signed heads above the asker's vector, as the store returns them.
    ///   - sign: signs a head for a change of this side's own identities; `nil` for others' changes.
    ///   - document: the document the changes belong to.
    ///   - since: the vector the asker has (what its log holds, outside the runs).
    ///   - outside: the change of the document with a hash, from this side's log (a parent the runs name outside
    ///     themselves).
    /// A run holds at most ``changesPerRun`` changes, so that its receiver (a relay) keeps a head of each device at
    /// least that often to pass on: see ``changesPerRun``.
    ///
    /// - Complexity: O(changes × devices per change), and twice that for each halving of a run.
    package func fetchedAsRuns(
        _ changes: [EncodedChange], heads: [SignedHead], signing sign: (Change) -> SignedHead? = { _ in nil },
        of document: DocumentID, since: VersionVector, outside: (ChangeHash) -> Change?
    ) -> [SyncAction] {
        var partHeads = PartHeads(kept: heads.filter { $0.document == document }, reply: changes.lazy.map(\.change))
        var actions: [SyncAction] = []
        var stamps: [ChangeHash: ChangeStamp] = [:]
        var start = 0
        let target = SyncMessage.Limits.runDecodedBytes / 2
        func plain(_ part: ArraySlice<EncodedChange>) {
            let heads = partHeads.next(part.lazy.map(\.change), sign: sign)
            actions.append(.send(.changes(document: document, changes: Array(part), heads: heads)))
        }
        while start < changes.count {
            var end = min(changes.count, start + Self.changesPerRun)
            var message: ChangeRunMessage?
            while message == nil {
                let part = changes[start..<end].map(\.change)
                let bytes: [UInt8]
                let declared: (count: Int, devices: Int, columnBytes: Int)
                do {
                    bytes = try ChangeRunCodec.encode(part, of: document) { hash in
                        stamps[hash] ?? outside(hash).map(ChangeStamp.init)
                    }
                    declared = try ChangeRunMessage.declared(bytes)
                } catch {
                    guard end - start > 1 else { break }
                    end = start + (end - start) / 2
                    continue
                }
                var known = Set(since.devices)
                for change in part { known.formUnion(change.vector.devices) }
                let bound = ChangeRunMessage.decodedBound(
                    count: declared.count, devices: declared.devices, knownDevices: known.count,
                    columnBytes: declared.columnBytes)
                if bound <= target {
                    message = ChangeRunMessage(
                        document: document, bytes: bytes,
                        heads: partHeads.next(part, sign: sign), declared: declared)
                } else if end - start > 1 {
                    end = start + (end - start) / 2
                } else {
                    break
                }
            }
            if let message {
                actions.append(.send(.run(message)))
            } else {
                // One change no run can carry: it travels as it is.
                plain(changes[start..<end])
            }
            for change in changes[start..<end] { stamps[change.change.hash] = ChangeStamp(change.change) }
            start = end
        }
        return actions
    }
}
