import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Every version of the document, the current one first, then the others in causal order.
    ///
    /// - Complexity: a replay per head not seen before (from its checkpoint, or from a known head's state).
    /// - Throws: ``DocumentError`` `.store`.
    public func versions() throws(DocumentError) -> [DocumentVersion<Model>] {
        try ensureOpen()
        let groups = try versionGroups()
        let names = try deviceNames()
        let ancestor = groups.count > 1 ? try commonAncestorState(of: groups) : groups[0].state
        return groups.enumerated().map { index, group in
            DocumentVersion(
                head: group.head, heads: group.heads.map(\.hash),
                savingDevice: Device(id: group.head.id.device, name: names[group.head.id.device] ?? ""),
                contents: group.state, ancestor: ancestor, isCurrent: index == 0, isConflict: index > 0)
        }
    }

    /// How many versions the document has: one, or more while it is in conflict. What `versions().count` says,
    /// without working out the common ancestor the versions are compared with.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func versionCount() throws(DocumentError) -> Int {
        try ensureOpen()
        return try versionGroups().count
    }

    /// The state the competing versions grew from: the state at the latest change all of them include (history
    /// is kept, so it is always available). Without a conflict, the current version's state.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func commonAncestor() throws(DocumentError) -> Model {
        try ensureOpen()
        let groups = try versionGroups()
        return groups.count > 1 ? try commonAncestorState(of: groups) : groups[0].state
    }

    /// The version the document shows.
    public func currentVersion() throws(DocumentError) -> DocumentVersion<Model> {
        try versions()[0]
    }

    /// The versions other than the current one.
    public func otherVersions() throws(DocumentError) -> [DocumentVersion<Model>] {
        Array(try versions().dropFirst())
    }

    /// The versions competing with the current one, awaiting a resolution.
    public func unresolvedConflictVersions() throws(DocumentError) -> [DocumentVersion<Model>] {
        try versions().filter(\.isConflict)
    }

    /// Makes `version` the current one, resolving the conflict in its favour (NSFileVersion's `replaceItem`).
    ///
    /// - Throws: ``DocumentError`` `.notFound` when it is not a version of the document, `.store`.
    public func replace(with version: DocumentVersion<Model>) throws(DocumentError) {
        try resolve(.version(version.id))
    }

    /// Resolves every conflict in favour of the current version (NSFileVersion's `removeOtherVersions`).
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func removeOtherVersions() throws(DocumentError) {
        try resolve(.version(try currentVersion().id))
    }

    /// Settles the competing versions: a resolution change made on all of them, recording the strategy, the
    /// version kept and the ones discarded, so it syncs and can be audited. Nothing happens without a conflict.
    ///
    /// - Throws: ``DocumentError`` `.notFound` for an unknown version, `.store`.
    public func resolve(_ choice: ConflictChoice) throws(DocumentError) {
        try ensureEditable()
        try commit()
        let groups = try versionGroups()
        guard groups.count > 1 else { return }
        let chosen: VersionGroup<Model>
        let strategy: Resolution.Strategy
        switch choice {
        case .version(let hash):
            guard let group = groups.first(where: { $0.heads.contains { $0.hash == hash } }) else {
                throw DocumentError(.notFound, "\(hash.shortHex) is not a version of \(info.displayName)")
            }
            chosen = group
            strategy = .userChoice
        case .latest:
            chosen = try latestGroup(of: groups)
            strategy = .latestWins
        }
        try settle(groups, keeping: chosen, strategy: strategy)
    }

    /// Settles `groups` by keeping `chosen` and discarding the others.
    func settle(
        _ groups: [VersionGroup<Model>], keeping chosen: VersionGroup<Model>, strategy: Resolution.Strategy
    ) throws(DocumentError) {
        let discarded = groups.filter { $0.head.hash != chosen.head.hash }.map(\.head.hash)
        let resolution = Resolution(strategy: strategy, chosen: [chosen.head.hash], discarded: discarded)
        try settle(groups, with: resolution, state: chosen.state)
    }

    /// The version written last: the one whose contents were last made (by wall time, then lamport, then device).
    ///
    /// A resolution that kept a version, or a rename, does not make its version newer: the version is as old as
    /// the change that made its contents. Otherwise the devices that resolve one conflict at once, each from what
    /// it has received so far, would each make their own choice the latest, and keep choosing again forever.
    func latestGroup(of groups: [VersionGroup<Model>]) throws(DocumentError) -> VersionGroup<Model> {
        var best: (group: VersionGroup<Model>, origin: Change)?
        for group in groups {
            let origin = try origin(of: group)
            if best == nil || Self.isLater(origin, than: best!.origin) { best = (group, origin) }
        }
        return best!.group
    }

    /// The change that made a version's contents (the latest, when its heads reached the same state apart).
    func origin(of group: VersionGroup<Model>) throws(DocumentError) -> Change {
        var origin = try contentOrigin(of: group.heads[0])
        for head in group.heads.dropFirst() {
            let other = try contentOrigin(of: head)
            if Self.isLater(other, than: origin) { origin = other }
        }
        return origin
    }

    private static func isLater(_ change: Change, than other: Change) -> Bool {
        (change.wallTime, change.lamport, change.id.device) > (other.wallTime, other.lamport, other.id.device)
    }

    /// The change that made the contents `change` shows: down the chosen versions of resolutions that only kept
    /// one, and the parents of renames and moves.
    private func contentOrigin(of change: Change) throws(DocumentError) -> Change {
        var current = change
        while true {
            let next: ChangeHash?
            switch current.kind {
            case .resolution(let resolution) where resolution.contents == nil: next = current.keptVersions.first
            case .lifecycle: next = current.parents.first
            default: next = nil
            }
            guard let next else { return current }
            do {
                guard let found = try library.store.change(next, of: id) else { return current }
                current = found
            } catch {
                throw .store(error, "reading the log")
            }
        }
    }

    /// Settles the competing versions with new contents (a person's own merge, say).
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func resolve(with contents: Model) throws(DocumentError) {
        try ensureEditable()
        try commit()
        let groups = try versionGroups()
        guard groups.count > 1 else { return }
        let resolution = Resolution(
            strategy: .userChoice, chosen: [], discarded: groups.map(\.head.hash), contents: contents.contents().encoded())
        try settle(groups, with: resolution, state: contents)
    }

    /// Appends `resolution` on every head and shows `state`.
    func settle(_ groups: [VersionGroup<Model>], with resolution: Resolution, state: Model) throws(DocumentError) {
        let heads = groups.flatMap { $0.heads.map(\.hash) } + absorbedHeads
        // An edit concurrent with a delete won (the document stayed): once the resolution joins the two, a restore
        // on top of it records that the edit won, so the delete does not come back.
        let kinds: [ChangeKind] = [.resolution(resolution)] + (info.restoredByConcurrentEdit ? [.lifecycle(.restore)] : [])
        let change: Change
        do {
            change = try library.store.append(kinds, to: id, on: .heads(heads)).last!
        } catch {
            throw .store(error, "recording the resolution of \(info.displayName)")
        }
        model = state
        head = change
        sameStateHeads = []
        unsavedChanges += 1
        changesSinceCheckpoint += 1
        headStates = [change.hash: KnownState(change: change, model: state)]
        rememberShared()
        removeState(.inConflict)
    }

    /// Keeps the state shown at `head` among ``sharedStates`` (see there).
    func rememberShared() {
        guard group.isEmpty, !sharedStates.contains(where: { $0.change.hash == head.hash }) else { return }
        sharedStates.append(KnownState(change: head, model: model))
        if sharedStates.count > Self.sharedStateLimit { sharedStates.removeFirst() }
    }

    /// The state at `target` from what the document knows already: a head's state as last computed, or the shown
    /// state (`shown`, by default the model), a known head's state or a recently shared version's state
    /// (``sharedStates``) that `target` descends from, advanced along `target`'s primary parents (the nearest
    /// first). `nil` when none applies and the log must be replayed: a version that keeps growing costs what arrived
    /// since it was last seen, and one made elsewhere from a version this document showed costs its own changes, not
    /// the history.
    func knownState(
        at target: Change, replay: DocumentReplay<Model>, shown: Model? = nil
    ) throws(DocumentError) -> DocumentReplay<Model>.Outcome? {
        if let known = headStates[target.hash] { return .init(model: known.model, skippedOperations: 0) }
        let others = headStates.values.filter { $0.change.hash != head.hash }
            + sharedStates.filter { $0.change.hash != head.hash && headStates[$0.change.hash] == nil }
        let starts = ([KnownState(change: head, model: shown ?? model)] + others)
            .filter { $0.change.vector.isContained(in: target.vector) }
            .sorted { ($0.change.vector.changeCount, $0.change.hash) > ($1.change.vector.changeCount, $1.change.hash) }
        for start in starts {
            if let outcome = try replay.advance(start.model, from: start.change, to: target) { return outcome }
        }
        return nil
    }

    /// The heads grouped by equal state: the current version's group first, then the others in causal order.
    func versionGroups() throws(DocumentError) -> [VersionGroup<Model>] {
        let (heads, absorbed) = try Self.contentHeads(of: id, in: library)
        absorbedHeads = absorbed.map(\.hash)
        let current = modelWithoutGroup()
        var states: [ChangeHash: Model] = [:]
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        for other in heads {
            if other.hash == head.hash {
                states[other.hash] = current
            } else {
                var outcome = try knownState(at: other, replay: replay, shown: current)
                if outcome == nil { outcome = try replay.state(at: other) }
                states[other.hash] = outcome?.model
                if let outcome { noteRefusedContents(outcome) }
            }
        }
        headStates = Dictionary(uniqueKeysWithValues: heads.compactMap { head in
            states[head.hash].map { (head.hash, KnownState(change: head, model: $0)) }
        })
        // One head is one version: nothing to compare.
        guard heads.count > 1 else {
            contentKeys = [:]
            return heads.map { VersionGroup(heads: [$0], state: states[$0.hash]!) }
        }
        var groups: [VersionGroup<Model>] = []
        var keys: [ContentHash] = []
        var headKeys: [ChangeHash: ContentHash] = [:]
        for other in heads.sorted(by: { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }) {
            let state = states[other.hash]!
            // A head's state never changes, so neither does its hash: detection costs what arrived, not the history.
            let key = contentKeys[other.hash] ?? ContentHash(hashing: state.contents().encoded())
            headKeys[other.hash] = key
            if let index = keys.firstIndex(of: key) {
                groups[index].heads.append(other)
            } else {
                keys.append(key)
                groups.append(VersionGroup(heads: [other], state: state))
            }
        }
        contentKeys = headKeys
        // The current version's group first: the one the document shows or, when others' changes made on it arrived
        // since (it is no longer a head), the one every device shows (not merely the causally first).
        let winner = heads.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
        let shown = groups.firstIndex { $0.heads.contains { $0.hash == head.hash } }
            ?? groups.firstIndex { $0.heads.contains { $0.hash == winner?.hash } }
        if let index = shown, index > 0 {
            groups.insert(groups.remove(at: index), at: 0)
        }
        return groups
    }

    /// Recomputes whether the document is in conflict, and which heads share the current state (the next change
    /// is made on them too, so equal versions merge quietly).
    func updateConflictState() throws(DocumentError) {
        let groups = try versionGroups()
        sameStateHeads = groups.first.map { $0.heads.map(\.hash).filter { $0 != head.hash } } ?? []
        if groups.count > 1 { insertState(.inConflict) } else { removeState(.inConflict) }
    }

    func deviceNames() throws(DocumentError) -> [DeviceID: String] {
        do {
            return Dictionary(try library.store.devices().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw .store(error, "reading device names")
        }
    }
}

/// Heads that share one state.
struct VersionGroup<Model: DocumentModel> {
    var heads: [Change]
    var state: Model

    /// The group's latest head.
    var head: Change { heads.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }! }
}
