import FolioConflicts
import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Every version of the document, the current one first, then the others in causal order.
    ///
    /// - Complexity: a replay per head not seen before (from its checkpoint, or from a known head's state); for a
    ///   text whose versions may merge silently, one replay of their change graph for all of them.
    /// - Throws: ``DocumentError`` `.store`.
    public func versions() throws(DocumentError) -> [DocumentVersion<Model>] {
        try ensureOpen()
        try versionGroups()
        let devices = try knownDevices()
        return tracking.conflicts.documentVersions(
            ancestor: try tracking.conflicts.ancestorState(in: storedHistory), devices: devices)
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
        try versionGroups()
        return try tracking.conflicts.ancestorState(in: storedHistory)
    }

    /// The version the document shows.
    ///
    /// - Throws: ``DocumentError``.
    public func currentVersion() throws(DocumentError) -> DocumentVersion<Model> {
        try versions()[0]
    }

    /// The versions other than the current one.
    ///
    /// - Throws: ``DocumentError``.
    public func otherVersions() throws(DocumentError) -> [DocumentVersion<Model>] {
        Array(try versions().dropFirst())
    }

    /// The versions competing with the current one, awaiting a resolution.
    ///
    /// - Throws: ``DocumentError``.
    public func unresolvedConflictVersions() throws(DocumentError) -> [DocumentVersion<Model>] {
        try versions().filter(\.isConflict)
    }

    /// Makes `version` the current one, resolving the conflict in its favour (NSFileVersion's `replaceItem`).
    ///
    /// - Throws: ``DocumentError`` `.notFound` when it is not a version of the document, `.store`.
    public func replace(with version: DocumentVersion<Model>) throws(DocumentError) {
        try resolve(.version(version.id))
    }

    /// Resolves every conflict in favour of the current version (NSFileVersion's `removeOtherVersions`), and lets
    /// go of the blobs only the discarded versions referred to (`ChangeLogStore.collectBlobs(of:)`): the space of
    /// their images and large members comes back on this device, and the discarded versions, still in the history,
    /// show those members unavailable.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func removeOtherVersions() throws(DocumentError) {
        try resolve(.version(try currentVersion().id))
        do {
            try library.store.collectBlobs(of: id)
        } catch {
            throw .store(error, "letting go of the blobs of the discarded versions of \(info.displayName)")
        }
    }

    /// Settles the competing versions: a resolution change made on all of them, recording the strategy, the
    /// version kept and the ones discarded, so it syncs and can be audited. Nothing happens without a conflict.
    ///
    /// - Throws: ``DocumentError`` `.notFound` for an unknown version, `.store`.
    public func resolve(_ choice: ConflictChoice) throws(DocumentError) {
        try ensureEditable()
        try commit()
        try versionGroups()
        guard tracking.conflicts.isInConflict else { return }
        guard let settlement = try tracking.conflicts.settlement(choosing: choice, in: storedHistory) else {
            guard case .version(let hash) = choice else { return }
            throw DocumentError(.notFound, "\(hash.shortHex) is not a version of \(info.displayName)")
        }
        try carryOut(settlement)
    }

    /// Settles the competing versions with new contents: the app's merge of them (a person's own, say). The
    /// resolution records strategy `appMerge` with every version as its input and none discarded, so the loss ledger
    /// shows the app's merge, not a choice that threw the versions away.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func resolve(with contents: Model) throws(DocumentError) {
        try ensureEditable()
        try commit()
        try versionGroups()
        guard let settlement = tracking.conflicts.settlement(with: contents) else { return }
        try carryOut(settlement)
    }

    /// Records what the conflict engine decided: creates the settlement's copies, appends its resolution on its
    /// parents (every head) and shows its state.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    func carryOut(_ settlement: ConflictSettlement<Model>) throws(DocumentError) {
        for copy in settlement.copies where try library.catalogInfo(of: copy.id) == nil {
            try library.record(
                creationOf: copy.id, type: Model.self, named: copy.name, in: info.container, contents: copy.contents)
        }
        let resolution = settlement.resolution
        let state = settlement.state
        // An edit concurrent with a delete won (the document stayed): once the resolution joins the two, a restore
        // on top of it records that the edit won, so the delete does not come back.
        let kinds: [ChangeKind] =
            [.resolution(resolution)] + (info.restoredByConcurrentEdit ? [.lifecycle(.restore)] : [])
        let change: Change
        do {
            change = try library.append(
                kinds.map { library.written($0, of: Model.self) }, to: id, on: .heads(settlement.parents)
            ).last!
        } catch {
            throw .store(error, "recording the resolution of \(info.displayName)")
        }
        noteAppended(change)
        model = state
        head = change
        versionContinuation.yield(change)
        saving.noteChange()
        tracking.settled(at: change, state: state)
        rememberShared()
        removeState(.inConflict)
        try settleStaleHead()
        // The others' selections, unplaced while versions competed or placed in the text replaced, go where the
        // settled text puts them.
        placePresence()
    }

    /// Keeps the state shown at `head` among the versions lately shown (``VersionTracking/rememberShown(_:model:)``),
    /// when it is the state at `head`.
    func rememberShared(spacedOnly: Bool = false) {
        guard !editing.group.hasUncommittedEdits, !headIsStale else { return }
        tracking.rememberShown(head, model: stateAtHead(), spacedOnly: spacedOnly)
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
        if let known = tracking.headStates[target.hash] { return .init(model: known.model, skippedOperations: 0) }
        if let merge = tracking.mergeShown(at: head.hash), target.vector.changeCount > head.vector.changeCount {
            // Another device's edit on the merge shown, or after one: the merge's state is the model's.
            var joined = head.vector
            var heads: Set<ChangeHash> = [head.hash]
            for other in merge.others {
                guard let state = tracking.headStates[other] else { break }
                joined.merge(state.change.vector)
                heads.insert(other)
            }
            if heads.count == merge.others.count + 1,
                let outcome = try replay.advance(merge: modelWithoutGroup(), of: heads, joined: joined, to: target)
            {
                return outcome
            }
        }
        let starts = tracking.starts(toward: target, head: head, shown: shown ?? stateAtHead())
        for start in starts {
            if let outcome = try replay.advance(start.model, from: start.change, to: target) { return outcome }
        }
        return nil
    }

    /// The heads grouped by equal state (the conflict engine's versions): the current version's group first, then
    /// the others in causal order. The heads are read each time; they are grouped again only when they, or the head
    /// shown, changed since they were last grouped.
    ///
    /// Versions that merge silently (`ConflictEngine.mergeSilently(hasResolver:in:)`) are one group, and the model
    /// shows their merge, when `mergingSilently` and nothing stands in the way: an app-defined resolver, edits not
    /// yet committed (made on the state shown, they would land elsewhere in the merge). A deleted document shows
    /// the merge too: every device that holds the same heads shows the same state.
    @discardableResult
    func versionGroups(mergingSilently: Bool = true) throws(DocumentError) -> [HeadGroup<Model>] {
        let heads = try library.contentHeads(of: id)
        if !headIsStale, let groups = tracking.versions(ifStill: heads, shown: head.hash) { return groups }
        let current = stateAtHead()
        var states: [ChangeHash: Model] = [:]
        let replay = DocumentReplay<Model>(
            store: library.store, document: id, decoded: tracking.decodedOperations, known: tracking.knownStates)
        // Versions of a text that may merge silently: the merge replays their change graph, which gives each
        // head's state too, so a version's edits are not replayed a second time for it. Where the graph cannot be
        // replayed, the replay of each head says why.
        let mayMergeSilently =
            heads.versions.count > 1 && mergingSilently && conflictResolver == nil
            && tracking.conflicts.strategy == .merge && !editing.group.hasUncommittedEdits && !headIsStale
            && replay.textIsAllOfModel && heads.versions.contains { tracking.headStates[$0.hash] == nil }
        let graph = mayMergeSilently ? try? replay.characterMergeGraph(of: heads.versions) : nil
        for other in heads.versions {
            if other.hash == head.hash {
                states[other.hash] = current
            } else if tracking.headStates[other.hash] == nil, let state = graph?.state(at: other.hash) {
                states[other.hash] = state
            } else {
                var outcome = try knownState(at: other, replay: replay, shown: current)
                if outcome == nil { outcome = try replay.state(at: other) }
                states[other.hash] = outcome?.model
                if let outcome { noteRefusedContents(outcome) }
            }
        }
        let groups = tracking.observe(heads, states: states, shown: head.hash)
        guard !editing.group.hasUncommittedEdits, !headIsStale else { return groups }
        let shownMerge = tracking.mergeShown(at: head.hash)
        var history = storedHistory
        history.replayedGraph = graph
        if groups.count > 1, mergingSilently, conflictResolver == nil,
            try tracking.conflicts.mergeSilently(hasResolver: false, in: history)
        {
            let merged = tracking.conflicts.versions[0]
            tracking.showMerge(
                .init(
                    shown: .init(change: head, model: current),
                    others: merged.heads.map(\.hash).filter { $0 != head.hash }))
            model = merged.state
            modelReplaced = true
            versionContinuation.yield(merged.head)
            return tracking.conflicts.versions
        }
        if shownMerge != nil {
            // The versions no longer merge silently (an overlap arrived): the model shows the version at its head.
            tracking.showMerge(nil)
            model = current
            modelReplaced = true
            versionContinuation.yield(head)
        }
        return groups
    }

    /// The state at ``head``: the model without the open group's edits, unless the model shows versions merged
    /// silently, the head's among them.
    func stateAtHead() -> Model {
        tracking.mergeShown(at: head.hash)?.shown.model ?? modelWithoutGroup()
    }

    /// Whether versions compete as the document shows them (``DocumentState/inConflict``).
    public var showsCompetingVersions: Bool { state.contains(.inConflict) }

    /// Groups the heads into versions (once per change of heads, see ``versionGroups()``), says whether the document
    /// is in conflict, and applies the library's strategy (or the app's resolver) to a conflict that appeared.
    func settleVersions() throws(DocumentError) {
        try updateConflictState()
        try applyConflictStrategy()
    }

    /// Groups the heads into versions and says whether the document is in conflict.
    func updateConflictState() throws(DocumentError) {
        let groups = try versionGroups()
        if groups.count > 1 { insertState(.inConflict) } else { removeState(.inConflict) }
    }

    /// The document's history as the conflict engine reads it.
    var storedHistory: StoredConflictHistory<Model> {
        StoredConflictHistory(
            store: library.store, document: id, subject: "the log of \(info.displayName)",
            decoded: tracking.decodedOperations, known: tracking.knownStates)
    }

    /// The devices the library's store knows, with their names and persons.
    func knownDevices() throws(DocumentError) -> [DeviceID: Device] {
        do {
            return Dictionary(
                try library.store.devices.all().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw .store(error, "reading device names")
        }
    }
}
