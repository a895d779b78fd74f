import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Settles the competing versions by a three-way merge from their common ancestor.
    ///
    /// When everything merges, a resolution with the merged contents is recorded (strategy `merge`, every version
    /// chosen, none discarded). When some parts conflict, nothing is recorded: the result's `merged` holds what
    /// merged (and the first version's text where it did not) and its `conflicts` the parts for a person, who
    /// settles them with ``resolve(with:)``.
    ///
    /// - Returns: the merge; `nil` when the model cannot merge or there is no conflict.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func resolveByMerging() throws(DocumentError) -> MergeResult<Model>? {
        try ensureEditable()
        try commit()
        let groups = try versionGroups()
        guard groups.count > 1, let mergeable = Model.self as? any MergeableDocumentModel.Type else { return nil }
        let base = try commonAncestorState(of: groups)
        let result = merged(mergeable, base: base, versions: groups.map(\.state))
        guard result.isClean else { return result }
        let resolution = Resolution(
            strategy: .merge, chosen: groups.map(\.head.hash), discarded: [], contents: result.merged.contents().encoded())
        try settle(groups, with: resolution, state: result.merged)
        return result
    }

    /// Keeps the current version here and turns every other version into a new document named
    /// "NAME (conflict from DEVICE)" in the same container. The new documents' identities derive from this one and
    /// the version's head, so devices that do the same create the same documents.
    ///
    /// - Returns: the identities of the new documents.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func resolveByKeepingBoth() throws(DocumentError) -> [DocumentID] {
        try ensureEditable()
        try commit()
        let all = try versions()
        guard all.count > 1 else { return [] }
        var created: [DocumentID] = []
        for version in all.dropFirst() {
            let copy = DocumentID(UUIDBytes(bytes: ContentHash(hashing: Data(id.uuid.bytes + version.id.bytes)).bytes.prefix(16)))
            let deviceName = version.savingDevice.name.isEmpty ? "another device" : version.savingDevice.name
            if try library.info(of: copy) == nil {
                try library.record(
                    creationOf: copy, type: Model.self, named: "\(info.displayName) (conflict from \(deviceName))",
                    in: info.container, contents: version.contents)
            }
            created.append(copy)
        }
        let groups = try versionGroups()
        let resolution = Resolution(
            strategy: .keepBoth, chosen: [groups[0].head.hash], discarded: groups.dropFirst().map(\.head.hash))
        try settle(groups, with: resolution, state: groups[0].state)
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
        var meet = groups[0].head.vector
        for group in groups.dropFirst() { meet = meet.intersecting(group.head.vector) }
        var candidates: [Change] = []
        do {
            for entry in meet.entries {
                if let change = try library.store.change(ChangeID(device: entry.device, seq: entry.seq), of: id) {
                    candidates.append(change)
                }
            }
        } catch {
            throw .store(error, "reading the common ancestor")
        }
        let ancestors = candidates.filter { candidate in
            !candidates.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) }
        }
        // Several ancestors (a criss-cross history): the one every device would pick, deterministically.
        guard let ancestor = ancestors.max(by: { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }) else {
            return Model()
        }
        return try DocumentReplay<Model>(store: library.store, document: id).state(at: ancestor).model
    }

    private func merged<M: MergeableDocumentModel>(_ type: M.Type, base: Model, versions: [Model]) -> MergeResult<Model> {
        // `Model` is `M` here: the cast only reopens the type the protocol check found.
        let result = M.merge(base: base as! M, versions: versions.map { $0 as! M })
        return MergeResult(merged: result.merged as! Model, conflicts: result.conflicts)
    }
}
