import FolioCore
import FolioMerge

extension ConflictEngine {
    /// The `merge` settlement: the versions merged three-way from their common ancestor.
    ///
    /// Three or more versions are merged two at a time, the two with the latest common ancestor first, each pair
    /// from its own: a version that saw another's edit before undoing it (removing a record another had edited,
    /// say) is then merged with that edit's version from a past that holds the edit, so the undoing stands. Only
    /// when a pair does not merge cleanly are all the versions merged at once from the ancestor they share.
    ///
    /// A model that merges character by character (`CharacterMergeable`) merges from the change graph when the
    /// history replays it. When no two versions overlap (deleted the same characters of their common text
    /// differently, as when one word is replaced two ways), the settlement is a small change that names the versions
    /// it merges and records no contents, and every device computes the merged text from the graph; when some do,
    /// nothing is recorded and ``ConflictAction/awaitUser(unmerged:)`` carries the merged text (the first version's
    /// text where two overlap) and a conflict at each overlapping stretch.
    ///
    /// When everything merges, the settlement records the merged contents (strategy `merge`, every version chosen,
    /// none discarded). When some parts conflict, nothing is to be recorded: ``ConflictAction/awaitUser(unmerged:)``
    /// carries what merged (and the first version's text where it did not) and the parts for a person.
    ///
    /// When the versions differ only by how they were settled (every edit one of them holds, all of them hold: they
    /// are resolutions of the same edits that came out differently, made by devices that merged apart), merging
    /// again would add nothing and could come out differently again on each device, forever: the version made last
    /// is kept instead, as ``ConflictChoice/latest`` would (a `latestWins` settlement, the others discarded).
    ///
    /// - Returns: `nil` when nothing competes or the model cannot merge.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func settlementByMerging<History: ConflictHistory<Model>>(
        in history: History
    ) throws(History.Failure) -> ConflictAction<Model>? {
        guard isInConflict, let mergeable = Model.self as? any MergeableDocumentModel.Type else { return nil }
        if try differOnlyInSettlement(in: history) {
            return .settle(settlement(keeping: try latestVersion(in: history), strategy: .latestWins))
        }
        if let type = Model.self as? any CharacterMergeable.Type,
            try !otherPartsDiverge(type, in: history),
            let merge = try history.characterMerge(of: versions.map(\.head))
        {
            guard merge.isClean else { return .awaitUser(unmerged: merge) }
            let resolution = Resolution(
                strategy: .merge, chosen: versions.map(\.head.hash), discarded: [], contents: nil)
            return .settle(ConflictSettlement(resolution: resolution, parents: settlementParents, state: merge.merged))
        }
        let result: MergeResult<Model>
        if versions.count > 2, let inPairs = try mergedInPairs(mergeable, in: history) {
            result = MergeResult(merged: inPairs, conflicts: [])
        } else {
            result = merged(mergeable, base: try ancestorState(in: history), versions: versions.map(\.state))
        }
        guard result.isClean else { return .awaitUser(unmerged: result) }
        let resolution = Resolution(
            strategy: .merge, chosen: versions.map(\.head.hash), discarded: [],
            contents: result.merged.contents().encoded())
        return .settle(ConflictSettlement(resolution: resolution, parents: settlementParents, state: result.merged))
    }

    /// Whether every change some of the competing versions hold and others lack only settles conflicts: a
    /// resolution that keeps versions or merges them by rule, or a rename, move, delete or restore. An edit, a
    /// baseline or the app's own merge (`appMerge`, or `userChoice` with contents) is news one version brings. A
    /// change missing from the history counts as news.
    ///
    /// - Complexity: reads the changes outside the versions' common past, and stops at the first piece of news.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func differOnlyInSettlement<History: ConflictHistory<Model>>(in history: History) throws(History.Failure)
        -> Bool
    {
        let heads = versions.flatMap(\.heads)
        guard var common = heads.first?.vector else { return false }
        var all = common
        for head in heads.dropFirst() {
            common = common.intersecting(head.vector)
            all.merge(head.vector)
        }
        for (device, seqs) in all.changesMissing(from: common) {
            for seq in seqs {
                guard let change = try history.change(ChangeID(device: device, seq: seq)) else { return false }
                switch change.kind {
                case .edit, .baseline: return false
                case .resolution(let resolution) where resolution.strategy == .appMerge:
                    return false
                case .resolution(let resolution) where resolution.strategy == .userChoice && resolution.contents != nil:
                    return false
                case .resolution, .lifecycle: continue
                }
            }
        }
        return true
    }

    /// The versions merged two at a time, the pair with the latest common ancestor first (by lamport, then device;
    /// ties by the versions' order), each from that ancestor; `nil` when a pair does not merge cleanly.
    private func mergedInPairs<History: ConflictHistory<Model>>(
        _ type: any MergeableDocumentModel.Type, in history: History
    ) throws(History.Failure) -> Model? {
        // In the order every device lists them (not the current version first), so that all merge alike.
        var parts = versions.sorted { $0.head.headOrder < $1.head.headOrder }
            .map { (heads: $0.heads, state: $0.state) }
        while parts.count > 1 {
            var closest: (first: Int, second: Int, ancestor: Change?)?
            for first in parts.indices {
                for second in parts.indices where second > first {
                    let ancestor = try Self.commonAncestor(of: parts[first].heads + parts[second].heads, in: history)
                    if closest == nil || Self.isCloser(ancestor, than: closest!.ancestor) {
                        closest = (first, second, ancestor)
                    }
                }
            }
            let (first, second, ancestor) = closest!
            let base = try ancestor.map { change throws(History.Failure) in try history.state(at: change) } ?? Model()
            let pair = merged(type, base: base, versions: [parts[first].state, parts[second].state])
            guard pair.isClean else { return nil }
            parts[first] = (parts[first].heads + parts[second].heads, pair.merged)
            parts.remove(at: second)
        }
        return parts[0].state
    }

    /// Whether the versions changed a part beside the text differently from their common ancestor (read only for
    /// a model that has such parts: replaying it can cost a walk through long branches).
    private func otherPartsDiverge<History: ConflictHistory<Model>, M: CharacterMergeable>(
        _ type: M.Type, in history: History
    ) throws(History.Failure) -> Bool {
        guard M.hasPartsBesideText else { return false }
        // `Model` is `M` here: the cast only reopens the type the protocol check found.
        return M.otherPartsDiverge(
            base: try ancestorState(in: history) as! M, versions: versions.map { $0.state as! M })
    }

    /// Whether common ancestor `ancestor` is later than `other` (`nil`: the empty past, before everything).
    private static func isCloser(_ ancestor: Change?, than other: Change?) -> Bool {
        guard let ancestor else { return false }
        guard let other else { return true }
        return ancestor.headOrder > other.headOrder
    }

    private func merged<M: MergeableDocumentModel>(_ type: M.Type, base: Model, versions: [Model]) -> MergeResult<Model>
    {
        // `Model` is `M` here: the cast only reopens the type the protocol check found.
        let result = M.merge(base: base as! M, versions: versions.map { $0 as! M })
        return MergeResult(merged: result.merged as! Model, conflicts: result.conflicts)
    }
}
