import FolioCore

extension ConflictEngine {
    /// Every conflict `resolutions` settled, in the order given (the log's causal order, oldest first): for each
    /// resolution change, the versions it settled (its parents' states, grouped by equal state as
    /// ``observe(_:states:shown:)`` groups heads, the version every device showed first), their common ancestor, and
    /// the resolution itself. Parents the history does not hold are left out.
    ///
    /// - Complexity: a state per parent of each resolution, and one for each common ancestor.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public static func conflictHistory<History: ConflictHistory<Model>>(
        settledBy resolutions: [Change], in history: History, devices: [DeviceID: Device]
    ) throws(History.Failure) -> [ConflictRecord<Model>] {
        var records: [ConflictRecord<Model>] = []
        for change in resolutions {
            var parents: [Change] = []
            for hash in change.parents {
                if let parent = try history.change(hash) { parents.append(parent) }
            }
            let heads = try competingHeads(among: parents, in: history)
            records.append(try record(of: heads, settledBy: change, in: history, devices: devices))
        }
        return records
    }

    /// The conflict awaiting a decision among the versions last observed, as a record without a resolution; `nil`
    /// when nothing competes.
    ///
    /// - Parameters:
    ///   - versions: the versions as ``documentVersions(ancestor:devices:)`` gives them.
    ///   - history: the document's history, where their common ancestor is found.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func unresolvedConflict<History: ConflictHistory<Model>>(
        _ versions: [DocumentVersion<Model>], in history: History
    ) throws(History.Failure) -> ConflictRecord<Model>? {
        guard versions.count > 1 else { return nil }
        let ancestor = try Self.commonAncestor(of: versions.map(\.head), in: history)
        return ConflictRecord(versions: versions, ancestor: ancestor, resolution: nil, resolvedBy: nil)
    }

    /// The record of `heads` competing and settled by `resolution`: their states grouped by equal state, the
    /// winner's group first.
    private static func record<History: ConflictHistory<Model>>(
        of heads: [Change], settledBy resolution: Change, in history: History, devices: [DeviceID: Device]
    ) throws(History.Failure) -> ConflictRecord<Model> {
        var groups: [HeadGroup<Model>] = []
        var keys: [ContentHash] = []
        for head in heads.sortedByHeadOrder() {
            let state = try history.state(at: head)
            let key = ContentHash(hashing: state.contents().encoded())
            if let index = keys.firstIndex(of: key) {
                groups[index].heads.append(head)
            } else {
                keys.append(key)
                groups.append(HeadGroup(heads: [head], state: state))
            }
        }
        // The version every device showed while the conflict stood: the highest lamport, then device.
        let winner = heads.winningHead()
        if let index = groups.firstIndex(where: { $0.heads.contains { $0.hash == winner?.hash } }), index > 0 {
            groups.insert(groups.remove(at: index), at: 0)
        }
        let ancestor = try commonAncestor(of: groups.map(\.head), in: history)
        let ancestorState =
            try ancestor.map { change throws(History.Failure) in try history.state(at: change) } ?? Model()
        let versions = groups.enumerated().map { index, group in
            DocumentVersion(
                head: group.head, heads: group.heads.map(\.hash),
                savingDevice: device(group.head.id.device, devices),
                contents: group.state, ancestor: ancestorState, isCurrent: index == 0, isConflict: false)
        }
        return ConflictRecord(
            versions: versions, ancestor: ancestor, resolution: resolution,
            resolvedBy: device(resolution.id.device, devices))
    }

    /// `parents` without those that changed only the name or place since contents another parent includes
    /// (a rename or move concurrent with an edit competes with nothing), as the document's own heads are read.
    private static func competingHeads<History: ConflictHistory<Model>>(
        among parents: [Change], in history: History
    ) throws(History.Failure) -> [Change] {
        guard parents.count > 1 else { return parents }
        var result: [Change] = []
        for candidate in parents {
            var base = candidate
            while case .lifecycle = base.kind, let parent = base.parents.first {
                guard let found = try history.change(parent) else { break }
                base = found
            }
            let subsumed =
                base.hash != candidate.hash
                && parents.contains { $0.hash != candidate.hash && $0.vector.contains(base.id) }
            if !subsumed { result.append(candidate) }
        }
        return result
    }
}
