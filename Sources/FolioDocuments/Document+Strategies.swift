import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Settles the competing versions by a three-way merge from their common ancestor.
    ///
    /// Three or more versions are merged two at a time, the two with the latest common ancestor first, each pair
    /// from its own: a version that saw another's edit before undoing it (removing a record another had edited,
    /// say) is then merged with that edit's version from a past that holds the edit, so the undoing stands. Only
    /// when a pair does not merge cleanly are all the versions merged at once from the ancestor they share.
    ///
    /// When everything merges, a resolution with the merged contents is recorded (strategy `merge`, every version
    /// chosen, none discarded). When some parts conflict, nothing is recorded: the result's `merged` holds what
    /// merged (and the first version's text where it did not) and its `conflicts` the parts for a person, who
    /// settles them with ``resolve(with:)``.
    ///
    /// When the versions differ only by how they were settled (every edit one of them holds, all of them hold: they
    /// are resolutions of the same edits that came out differently, made by devices that merged apart), merging
    /// again would add nothing and could come out differently again on each device, forever: the version made last
    /// is kept instead, as ``resolve(_:)`` with `.latest` would (a `latestWins` resolution, the others discarded).
    ///
    /// - Returns: the merge; `nil` when the model cannot merge or there is no conflict.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func resolveByMerging() throws(DocumentError) -> MergeResult<Model>? {
        try ensureEditable()
        try commit()
        let groups = try versionGroups()
        guard groups.count > 1, let mergeable = Model.self as? any MergeableDocumentModel.Type else { return nil }
        if try differOnlyInSettlement(groups) {
            let kept = try latestGroup(of: groups)
            try settle(groups, keeping: kept, strategy: .latestWins)
            return MergeResult(merged: kept.state, conflicts: [])
        }
        let result: MergeResult<Model>
        if groups.count > 2, let inPairs = try mergedInPairs(mergeable, groups) {
            result = MergeResult(merged: inPairs, conflicts: [])
        } else {
            result = merged(mergeable, base: try commonAncestorState(of: groups), versions: groups.map(\.state))
        }
        guard result.isClean else { return result }
        let resolution = Resolution(
            strategy: .merge, chosen: groups.map(\.head.hash), discarded: [], contents: result.merged.contents().encoded())
        try settle(groups, with: resolution, state: result.merged)
        return result
    }

    /// Whether every change some of the competing versions hold and others lack only settles conflicts: a
    /// resolution that keeps versions or merges them by rule, or a rename, move, delete or restore. An edit, a
    /// baseline or a person's own resolved contents (`userChoice` with contents) is news one version brings.
    ///
    /// - Complexity: reads the changes outside the versions' common past, and stops at the first piece of news.
    func differOnlyInSettlement(_ groups: [VersionGroup<Model>]) throws(DocumentError) -> Bool {
        let heads = groups.flatMap(\.heads)
        guard var common = heads.first?.vector else { return false }
        var all = common
        for head in heads.dropFirst() {
            common = common.intersecting(head.vector)
            all.merge(head.vector)
        }
        for (device, seqs) in all.changesMissing(from: common) {
            for seq in seqs {
                let change: Change?
                do { change = try library.store.change(ChangeID(device: device, seq: seq), of: id) } catch {
                    throw .store(error, "reading the log of \(info.displayName)")
                }
                guard let change else { return false }
                switch change.kind {
                case .edit, .baseline: return false
                case .resolution(let resolution) where resolution.strategy == .userChoice && resolution.contents != nil:
                    return false
                case .resolution, .lifecycle: continue
                }
            }
        }
        return true
    }

    /// Keeps the version whose contents were made last (by lamport, then device) here and turns every other version
    /// into a new document named "NAME (conflict from DEVICE)" in the same container, DEVICE being the one that
    /// made that version's contents.
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
        let groups = try versionGroups()
        guard groups.count > 1 else { return [] }
        let origins = try groups.map { group throws(DocumentError) in try origin(of: group) }
        let kept = origins.indices.max { (origins[$0].lamport, origins[$0].id.device) < (origins[$1].lamport, origins[$1].id.device) }!
        let names = try deviceNames()
        var created: [DocumentID] = []
        for index in groups.indices where index != kept {
            let origin = origins[index]
            let copy = DocumentID(UUIDBytes(bytes: ContentHash(hashing: Data(id.uuid.bytes + origin.hash.bytes)).bytes.prefix(16)))
            let deviceName = names[origin.id.device].flatMap { $0.isEmpty ? nil : $0 } ?? "another device"
            if try library.info(of: copy) == nil {
                try library.record(
                    creationOf: copy, type: Model.self, named: "\(info.displayName) (conflict from \(deviceName))",
                    in: info.container, contents: groups[index].state)
            }
            created.append(copy)
        }
        let resolution = Resolution(
            strategy: .keepBoth, chosen: [groups[kept].head.hash],
            discarded: groups.indices.filter { $0 != kept }.map { groups[$0].head.hash })
        try settle(groups, with: resolution, state: groups[kept].state)
        return created
    }

    /// Applies the library's strategy for this type to a conflict that just appeared.
    func applyConflictStrategy() throws(DocumentError) {
        guard state.contains(.inConflict), !state.contains(.editingDisabled) else { return }
        if let resolver = conflictResolver {
            let all = try versions()
            do {
                try resolve(with: try resolver(all))
            } catch let error as DocumentError {
                throw error
            } catch {
                throw DocumentError(.invalidContents, "the custom conflict resolver of \(info.displayName) failed", cause: error)
            }
            return
        }
        switch library.conflictPolicy.strategy(for: Model.documentType) {
        case .askUser: break
        case .latestWins: try resolve(.latest)
        case .merge: try resolveByMerging()
        case .keepBoth: try resolveByKeepingBoth()
        }
    }

    /// The state every competing version grew from: the state at the latest change all of them include.
    func commonAncestorState(of groups: [VersionGroup<Model>]) throws(DocumentError) -> Model {
        guard let ancestor = try commonAncestorChange(of: groups.map(\.head)) else { return Model() }
        return try DocumentReplay<Model>(store: library.store, document: id).state(at: ancestor).model
    }

    /// The versions of `groups` merged two at a time, the pair with the latest common ancestor first (by lamport,
    /// then device; ties by the versions' order), each from that ancestor; `nil` when a pair does not merge cleanly.
    private func mergedInPairs(
        _ type: any MergeableDocumentModel.Type, _ groups: [VersionGroup<Model>]
    ) throws(DocumentError) -> Model? {
        // In the order every device lists them (not the current version first), so that all merge alike.
        var parts = groups.sorted { ($0.head.lamport, $0.head.id.device) < ($1.head.lamport, $1.head.id.device) }
            .map { (heads: $0.heads, state: $0.state) }
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        while parts.count > 1 {
            var closest: (first: Int, second: Int, ancestor: Change?)?
            for first in parts.indices {
                for second in parts.indices where second > first {
                    let ancestor = try commonAncestorChange(of: parts[first].heads + parts[second].heads)
                    if closest == nil || Self.isCloser(ancestor, than: closest!.ancestor) {
                        closest = (first, second, ancestor)
                    }
                }
            }
            let (first, second, ancestor) = closest!
            let base = try ancestor.map { change throws(DocumentError) in try replay.state(at: change).model } ?? Model()
            let pair = merged(type, base: base, versions: [parts[first].state, parts[second].state])
            guard pair.isClean else { return nil }
            parts[first] = (parts[first].heads + parts[second].heads, pair.merged)
            parts.remove(at: second)
        }
        return parts[0].state
    }

    /// Whether common ancestor `ancestor` is later than `other` (`nil`: the empty past, before everything).
    private static func isCloser(_ ancestor: Change?, than other: Change?) -> Bool {
        guard let ancestor else { return false }
        guard let other else { return true }
        return (ancestor.lamport, ancestor.id.device) > (other.lamport, other.id.device)
    }

    private func merged<M: MergeableDocumentModel>(_ type: M.Type, base: Model, versions: [Model]) -> MergeResult<Model> {
        // `Model` is `M` here: the cast only reopens the type the protocol check found.
        let result = M.merge(base: base as! M, versions: versions.map { $0 as! M })
        return MergeResult(merged: result.merged as! Model, conflicts: result.conflicts)
    }
}
