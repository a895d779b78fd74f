import FolioConflicts
import FolioCore
import FolioStore
import Foundation

/// One open document (what a UIDocument is on Apple platforms): its model, rebuilt from the log, with change
/// tracking, undo and redo, saving, autosave and a state that can be watched.
///
/// Editing appends to the log. Rapid edits are grouped into one change (one undo step) as the library's
/// ``AutosavePolicy`` says; a group is committed when the next edit comes after the grouping interval, when it
/// reaches the group limit, on ``commit()``, ``save()``, ``undo()``, ``redo()`` and ``close()``, and by
/// ``runDueWork()``. Until a group is committed, a crash may lose it; once committed, nothing can.
public actor Document<Model: DocumentModel>: OpenDocument {
    /// The document's identity.
    public nonisolated let id: DocumentID
    /// The library it belongs to.
    public nonisolated let library: DocumentLibrary
    /// Where the document's work runs: its own queue, since SQLite and file work block, or the library's
    /// ``DocumentLibrary/workExecutor``.
    nonisolated let executor: BlockingWorkExecutor
    /// The document runs on a queue of its own, or on its library's ``DocumentLibrary/workExecutor``: off the
    /// cooperative thread pool (see `BlockingWorkExecutor`).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// What the catalog says of it: name, container, dates.
    public internal(set) var info: DocumentInfo { didSet { dueWorkMayComeSooner() } }
    /// The model: the current version's state, with the open group's edits applied.
    public internal(set) var model: Model
    /// The document's state; watch ``stateChanges`` to follow it.
    public private(set) var state: DocumentState = .normal
    /// Every new state, as it changes (ends when the document closes or is released). One consumer: iterate it from
    /// one task (an `AsyncStream` splits its elements between iterators).
    public nonisolated let stateChanges: AsyncStream<DocumentState>
    private let stateContinuation: AsyncStream<DocumentState>.Continuation
    /// Every version the document takes from outside its own edits, as its head change: changes picked up from
    /// other devices or processes (a sync brings them at once), and settlements of conflicts. Ends when the
    /// document closes or is released. One consumer: iterate it from one task (an `AsyncStream` splits its
    /// elements between iterators); the newest ``versionChangeBuffer`` wait for it, older ones are dropped.
    public nonisolated let versionChanges: AsyncStream<Change>
    let versionContinuation: AsyncStream<Change>.Continuation
    /// How many versions ``versionChanges`` keeps for a consumer that has not read them.
    public static var versionChangeBuffer: Int { 16 }
    /// The other devices in the document while its library syncs live, by device, each time one of them comes,
    /// moves its selection or leaves, and when the text moves under their selections (a text document's; see
    /// `Document+Presence.swift`). Ends when the document closes or is released. One consumer; the newest list
    /// waits for it.
    public nonisolated let presence: AsyncStream<[Presence]>
    let presenceContinuation: AsyncStream<[Presence]>.Continuation
    /// This device's selection and the others' (see ``PresenceTracking``).
    var presenceTracking = PresenceTracking()

    /// The change whose state `model` shows (before the open group).
    var head: Change
    /// The document's vector in the log when the document last looked (opened, refreshed or appended): a log that
    /// moved beyond it holds changes the next edit must build on (``catchUp()``).
    var seenVector: VersionVector
    /// Set when the model came to show another merge of the heads (or stopped showing one) without a new head.
    var modelReplaced = false
    /// Whether `model` may not be the state at `head`: an append joined changes of this device that the document
    /// had not seen (another library on the same directory made them), so the next catch-up replays the head.
    var headIsStale = false
    /// What the document knows of its versions (heads' states, the conflict engine; see ``VersionTracking``).
    var tracking: VersionTracking<Model>
    /// An app-defined rule that settles conflicts (the `custom` strategy), overriding the library's policy.
    var conflictResolver: (@Sendable ([DocumentVersion<Model>]) throws -> Model)?
    /// The open group, undo and redo (see ``EditingSession``).
    var editing: EditingSession<Model>
    /// What is not yet saved or in a checkpoint (see ``SaveState``).
    var saving: SaveState { didSet { if saving.unsavedChanges != oldValue.unsavedChanges { dueWorkMayComeSooner() } } }
    /// Operations of remote changes that did not apply to this line of history (skipped identically everywhere).
    public private(set) var skippedOperations = 0
    /// Baselines and resolutions met while rebuilding the document's versions whose contents the model refused
    /// (bytes that are not contents, or contents the model cannot load), in ascending order. Such a change is read
    /// as carrying no contents, so the state at it is its primary parent's, identically on every device: a forged
    /// or corrupt change never makes the document unopenable, and this lists what was passed over.
    public private(set) var refusedContents: [ChangeHash] = []
    /// The versions this device recorded (see ``RecordedVersions``), once read from the store.
    var recordedVersions: RecordedVersions?
    /// The deadline timer that runs due work (see `Document+DueWork.swift`).
    var timer = DueWorkTimer()
    /// How many times the deadline timer has woken the document (for tests: a document with nothing due sleeps).
    package var timerWakeUps: Int { timer.wakeUps }

    /// The document type.
    public nonisolated var type: DocumentType { Model.documentType }
    /// The display name.
    public var displayName: String { info.displayName }
    /// The wall time of the latest change.
    public var modificationDate: Timestamp { max(info.modificationDate, editing.lastEditTime ?? info.modificationDate) }
    /// Where the document's file is written.
    ///
    /// - Throws: ``DocumentError`` `.store` when the library's records cannot be read.
    public var fileURL: URL {
        get throws(DocumentError) { try library.fileLocation(for: info) }
    }
    /// Changes made since the last save (what UIDocument's change count tracks).
    public var changeCount: Int { saving.unsavedChanges + (editing.group.hasUncommittedEdits ? 1 : 0) }
    /// Whether anything changed since the last save.
    public var hasUnsavedChanges: Bool { changeCount > 0 }
    /// Whether ``undo()`` has something to undo.
    public var canUndo: Bool { editing.canUndo }
    /// Whether ``redo()`` has something to redo.
    public var canRedo: Bool { editing.canRedo }
    /// The version the model shows: the head it was rebuilt at.
    public var currentHead: Change { head }

    private init(
        info: DocumentInfo, library: DocumentLibrary, head: Change, seen: VersionVector,
        outcome: DocumentReplay<Model>.Outcome, tail: Int
    ) {
        id = info.id
        self.library = library
        executor = library.workExecutor ?? BlockingWorkExecutor(label: "folio.document")
        self.info = info
        self.head = head
        seenVector = seen
        model = outcome.model
        skippedOperations = outcome.skippedOperations
        refusedContents = Array(Set(outcome.refusedContents)).sorted()
        saving = SaveState(changesSinceCheckpoint: tail)
        editing = EditingSession(now: library.clock.now())
        tracking = VersionTracking(document: info.id, policy: library.conflictPolicy)
        (stateChanges, stateContinuation) = AsyncStream.makeStream(of: DocumentState.self)
        (versionChanges, versionContinuation) = AsyncStream.makeStream(
            of: Change.self, bufferingPolicy: .bufferingNewest(Self.versionChangeBuffer))
        (presence, presenceContinuation) = AsyncStream.makeStream(
            of: [Presence].self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        // A document the app let go of without closing it: its streams end, so no loop waits on them forever, its
        // timer stops, and the other devices stop showing this one in it.
        if presenceTracking.published { library.presenceOutlet([], in: id) }
        stateContinuation.finish()
        versionContinuation.finish()
        presenceContinuation.finish()
        timer.stop()
    }

    static func open(_ info: DocumentInfo, in library: DocumentLibrary) async throws(DocumentError) -> Document {
        let seen = try readVector(of: info.id, in: library)
        let head = try library.winningHead(of: info.id)
        var replay = DocumentReplay<Model>(store: library.store, document: info.id)
        // A long history with no recent checkpoint (a bulk import, a first sync) streams from the log.
        replay.streaming = .init()
        let outcome = try replay.state(at: head)
        let tail: Int
        do {
            let checkpoint = try library.store.checkpoints.latest(of: info.id, within: head.vector)
            tail = Int(head.vector.changeCount - (checkpoint?.vector.changeCount ?? 0))
        } catch {
            throw .store(error, "reading checkpoints")
        }
        let document = Document(
            info: info, library: library, head: head, seen: seen, outcome: outcome, tail: tail)
        try await document.finishOpening()
        return document
    }

    private func finishOpening() throws(DocumentError) {
        do {
            editing.history = UndoHistory(
                decoding: try library.localState.value(UndoHistory<Model.Operation>.stateKey, of: id))
        } catch {
            throw .store(error, "reading the undo history")
        }
        updateEditability()
        rememberShared()
        try recoverInterruptedSave()
        try noticeExternalModification()
        try settleVersions()
        // The other devices already in the document, as the live sync last heard of them.
        let now = library.clock.now().millisecondsSince1970
        for (device, kept) in library.presenceOutlet.kept(in: id, now: now) {
            receivePresence(kept.state, from: device, heard: kept.heard)
        }
        if library.runsBackgroundWork { startBackgroundWork() }
    }

    /// The document's vector in the log.
    static func readVector(of id: DocumentID, in library: DocumentLibrary) throws(DocumentError) -> VersionVector {
        do { return try library.store.vector(of: id) } catch { throw .store(error, "reading the vector of \(id)") }
    }

    /// Picks up what the log holds beyond what the document has seen (changes that a sync, another process, or
    /// another library on the same directory appended), so that the next change builds on all of it: an edit made
    /// on an older version would fork the document from its own device's past.
    ///
    /// - Complexity: one vector read when the log has not moved.
    func catchUp() throws(DocumentError) {
        try catchUp(onlyOwnChanges: false)
    }

    /// Picks up what the log holds beyond what the document has seen, as ``catchUp()`` does; with `onlyOwnChanges`,
    /// only when the log holds changes of this device the document has not seen (another library on the same
    /// directory, another process), which the next change must build on not to fork the device's own past. What
    /// other devices sent is then left to the next refresh: an edit's positions were taken from the model the caller
    /// read, and a model that moved under them would put the edit elsewhere; made on the version the caller saw, the
    /// edit merges with what arrived at the place it meant.
    ///
    /// - Complexity: one vector read when the log has not moved.
    func catchUp(onlyOwnChanges: Bool) throws(DocumentError) {
        try ensureOpen()
        if !headIsStale {
            let vector = try Self.readVector(of: id, in: library)
            if onlyOwnChanges {
                let device = library.store.localDevice.id
                guard vector[device] > seenVector[device] else { return }
            } else {
                guard vector != seenVector else { return }
            }
        }
        try refresh()
    }

    /// Notes that the log holds `change`, appended by the document. The store makes a change on its author's
    /// latest one too: when that one is a change the document had not seen, the model is not the state at the
    /// change, and ``headIsStale`` says so.
    func noteAppended(_ change: Change) {
        let builtOnSeen = change.vector.devices.allSatisfy { device in
            seenVector[device] >= (device == change.id.device ? change.id.seq - 1 : change.vector[device])
        }
        if builtOnSeen { seenVector.merge(change.vector) } else { headIsStale = true }
    }

    /// Replays the head when an append left the model behind it (``headIsStale``).
    func settleStaleHead() throws(DocumentError) {
        if headIsStale { try catchUp() }
    }

    /// Adds the changes whose contents a replay refused to ``refusedContents``.
    func noteRefusedContents(_ outcome: DocumentReplay<Model>.Outcome) {
        guard !outcome.refusedContents.isEmpty else { return }
        refusedContents = Array(Set(refusedContents + outcome.refusedContents)).sorted()
    }

    // MARK: State

    func setState(_ newState: DocumentState) {
        guard newState != state else { return }
        state = newState
        stateContinuation.yield(newState)
    }

    func insertState(_ flag: DocumentState) { setState(state.union(flag)) }
    func removeState(_ flag: DocumentState) { setState(state.subtracting(flag)) }

    private func updateEditability() {
        if info.isDeleted { insertState(.editingDisabled) } else { removeState(.editingDisabled) }
    }

    /// Reads the catalog again: the library may have renamed, moved or deleted the document since it was opened.
    func reloadInfo() throws(DocumentError) {
        if let latest = try library.catalogInfo(of: id) { info = latest }
        updateEditability()
    }

    func ensureOpen() throws(DocumentError) {
        guard !state.contains(.closed) else { throw DocumentError(.closed, "\(info.displayName) is closed") }
    }

    func ensureEditable() throws(DocumentError) {
        try ensureOpen()
        guard !state.contains(.editingDisabled) else {
            throw DocumentError(
                info.isDeleted ? .deleted : .editingDisabled,
                "\(info.displayName) cannot be edited now\(info.isDeleted ? ": it is deleted" : "")")
        }
    }

    // MARK: Others' changes

    /// Picks up changes made by other processes or peers since the document last looked: the catalog (name,
    /// container, deletion: the file follows, see ``DocumentLibrary/updateFile(of:)``) and the version every device
    /// shows. The open group's edits are committed first; while the library syncs live with a
    /// ``AutosavePolicy/liveCommitDelay`` and the model undoes by taking back what its changes did (a text), the group
    /// goes on (one undo step, whatever arrives meanwhile), otherwise it ends.
    ///
    /// - Returns: whether the model changed.
    /// - Throws: ``DocumentError`` `.store`.
    @discardableResult
    public func refresh() throws(DocumentError) -> Bool {
        try ensureOpen()
        if library.syncsLive, library.autosave.liveCommitDelay != nil, EditingSession<Model>.undoesByReversal {
            try commitUncommittedEdits()
        } else {
            try commit()
        }
        // Read first: what arrives from now on is caught up with next time; a reload that fails leaves the
        // document to catch up again.
        let previousSeen = seenVector
        seenVector = try Self.readVector(of: id, in: library)
        // A member shown unavailable whose blob has come: the state is read again, with it.
        if blobsArrivedForShownMembers() {
            headIsStale = true
        }
        do {
            return try reloadAtSeenVector()
        } catch {
            seenVector = previousSeen
            throw error
        }
    }

    /// The body of ``refresh()``, once the log's vector is read.
    private func reloadAtSeenVector() throws(DocumentError) -> Bool {
        let previous = info
        try reloadInfo()
        if (info.displayName, info.container, info.isDeleted) != (
            previous.displayName, previous.container, previous.isDeleted
        ) {
            // Renamed, moved or deleted elsewhere: the file follows now, or else at the next save.
            try? library.followFile(of: id)
        }
        let winner = try library.winningHead(of: id)
        guard winner.hash != head.hash || headIsStale else {
            // Others' heads may have arrived without changing the version shown: conflicts are still to be seen, and
            // a merge shown may take them in (or end).
            let before = head.hash
            modelReplaced = false
            try settleVersions()
            if head.hash != before || modelReplaced { placePresence() }
            if modelReplaced, tracking.mergeShown(at: head.hash) != nil { try? recordVersion(.received) }
            return head.hash != before || modelReplaced
        }
        let previousHead = head
        var replay = DocumentReplay<Model>(
            store: library.store, document: id, decoded: tracking.decodedOperations)
        replay.notesPassedStates = true
        var outcome: DocumentReplay<Model>.Outcome?
        if headIsStale {
            // The model is not the state at the head: nothing known starts from it.
            tracking.forgetStates()
        } else {
            // The version shown until now is usually still a version (a competing one): its state is known.
            let shown = stateAtHead()
            tracking.headStates[head.hash] = .init(change: head, model: shown)
            replay.known = tracking.knownStates
            outcome = try knownState(at: winner, replay: replay, shown: shown)
        }
        if outcome == nil { outcome = try replay.state(at: winner) }
        guard let outcome else { return false }
        headIsStale = false
        model = outcome.model
        tracking.rememberPassed(outcome.passedStates)
        skippedOperations += outcome.skippedOperations
        noteRefusedContents(outcome)
        head = winner
        rememberShared()
        versionContinuation.yield(winner)
        try settleVersions()
        placePresence()
        // A version of others' work: their changes under the new head, or merged with it. (The history indexes the
        // log: nothing is lost when a version cannot be recorded.)
        let local = library.device.id
        if winner.vector.entries.contains(where: { $0.device != local && $0.seq > previousHead.vector[$0.device] })
            || tracking.mergeShown(at: head.hash) != nil
        {
            try? recordVersion(.received)
        }
        return true
    }

    /// Gives the document an app-defined rule for conflicts (the `custom` strategy): called with every version,
    /// current first, whenever competing versions appear; what it returns becomes the resolution's contents.
    /// `nil` goes back to the library's policy.
    ///
    /// - Throws: ``DocumentError``.
    public func setConflictResolver(_ resolver: (@Sendable ([DocumentVersion<Model>]) throws -> Model)?)
        throws(DocumentError)
    {
        conflictResolver = resolver
        if resolver != nil, tracking.mergeShown(at: head.hash) != nil, !editing.group.hasUncommittedEdits {
            // The resolver sees the versions the model showed merged: the model shows its head's again.
            model = stateAtHead()
            tracking.showMerge(nil)
            tracking.joined()
            modelReplaced = true
            placePresence()
            try updateConflictState()
        }
        try applyConflictStrategy()
    }

    // MARK: Closing

    /// Commits the open group, saves when the policy says so (a failed save leaves `.savingError`, the edits
    /// safe in the log), takes a checkpoint so the next open is fast, and closes.
    ///
    /// - Throws: ``DocumentError`` `.store` when the group cannot be committed; the document stays open then.
    public func close() throws(DocumentError) {
        guard !state.contains(.closed) else { return }
        try commit()
        try reloadInfo()
        if library.autosave.saveOnClose && hasUnsavedChanges && !info.isDeleted {
            // A `catch where` here would rethrow the typed error from an untyped function, which Swift 6.3's SIL
            // ownership check rejects; the guard rethrows it instead.
            do { try save() } catch {
                // The edits are in the log; the file is written again at the next save.
                guard Self.leavesEditsSafe(error) else { throw error }
            }
        }
        try? recordVersion(.closed)  // the history indexes the log: nothing is lost without it
        try takeCheckpointIfNeeded(force: true)
        timer.stop()
        leavePresence()
        insertState(.closed)
        stateContinuation.finish()
        versionContinuation.finish()
        presenceContinuation.finish()
        library.openDocuments.remove(self, id: id)
    }

    func autosaveIfDue(now: Timestamp) throws(DocumentError) {
        guard !info.isDeleted,
            library.autosave.saveIsDue(changeCount: changeCount, lastEdit: editing.lastEditTime, at: now)
        else { return }
        do { try save() } catch  where Self.leavesEditsSafe(error) {
            // `.savingError` is set; the next save (autosave or explicit) rewrites from the log.
        }
    }

    /// Whether a save failed on the file's side (unwritable, unreadable or made invalid by another program, or the
    /// document deleted meanwhile), every edit safe in the log: an autosave or a close goes on.
    static func leavesEditsSafe(_ error: DocumentError) -> Bool {
        [.save, .invalidContents, .deleted].contains(error.code)
    }
}
