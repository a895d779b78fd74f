import FolioConflicts
import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Applies `operation` to the model and records it in the open group.
    ///
    /// An edit that starts a group first catches up with the log (`catchUp()`), so the model may then hold what a
    /// sync or another process brought: build position-based operations from ``model`` inside one ``perform(_:)``
    /// block, so that nothing moves between reading the model and editing it.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when the model refuses it (nothing changes), `.closed`,
    ///   `.deleted`, or `.store` when committing the previous group failed.
    public func edit(_ operation: Model.Operation) throws {
        try ensureOpen()
        let now = library.clock.now()
        let policy = library.autosave
        if !group.isEmpty, let last = lastEditTime,
            now.millisecondsSince1970 - last.millisecondsSince1970 > policy.groupingInterval
                || group.operations.count >= policy.groupLimit
        {
            try commitGroup()
        }
        // A new group builds on everything the log holds (which may have deleted the document).
        if group.isEmpty { try catchUp() }
        try ensureEditable()
        let inverse: Model.Operation
        do {
            inverse = try model.apply(operation)
        } catch {
            throw DocumentError(.invalidOperation, "the edit does not apply to \(info.displayName)", cause: error)
        }
        let startsGroup = group.isEmpty
        group.add(operation, inverse: inverse)
        lastEditTime = now
        // The first edit of a group sets its deadline; the next ones only move deadlines later (nothing to wake).
        if startsGroup { dueWorkMayComeSooner() }
        if policy.groupingInterval == 0 { try commitGroup() }
        try autosaveIfDue(now: now)
    }

    /// Applies several operations as one group (one change, one undo step), committed before returning.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when one does not apply (then none is kept), and as ``edit(_:)``.
    public func edit(_ operations: [Model.Operation]) throws {
        try prepareToEdit()
        let saved = model
        var batch = EditGroup<Model>()
        for operation in operations {
            do {
                batch.add(operation, inverse: try model.apply(operation))
            } catch {
                model = saved
                throw DocumentError(.invalidOperation, "the edit does not apply to \(info.displayName)", cause: error)
            }
        }
        group = batch
        lastEditTime = library.clock.now()
        try commitGroup()
    }

    /// Readies the document for a change made at once: commits the open group, catches up with the log
    /// (``catchUp()``), and checks that it can be edited.
    func prepareToEdit() throws(DocumentError) {
        try ensureOpen()
        try commitGroup()
        try catchUp()
        try ensureEditable()
    }

    /// Commits the open group as one change, now.
    ///
    /// - Throws: ``DocumentError`` `.store`; the group stays open then, to be committed later.
    public func commit() throws {
        try commitGroup()
    }

    /// The typed core of ``commit()``, for the module's own code.
    func commitGroup() throws(DocumentError) {
        guard !group.isEmpty else { return }
        let operations = group.operations
        let undoOperations = group.undoOperations
        var newHistory = history
        let shown = head.hash
        let change = try append(.edit(Edit(operations: Model.Operation.encodeGroup(operations)))) { change in
            newHistory.recordEdit(.init(target: change.id, operations: undoOperations))
            return newHistory
        }
        history = newHistory
        group = EditGroup()
        head = change
        unsavedChanges += 1
        changesSinceCheckpoint += 1
        lastCommitTime = library.clock.now()
        try takeCheckpointIfNeeded(force: false)
        updateConflictState(after: change, madeOn: shown)
        try settleStaleHead()
    }

    /// Undoes the newest step: the open group, or else the newest committed change of this device still on the undo
    /// stack. The undo is itself a change carrying the inverse operations, so it syncs.
    ///
    /// - Throws: ``DocumentError`` `.nothingToUndo`, `.invalidOperation` when the inverse no longer applies (the
    ///   document changed underneath; nothing changes), `.store`.
    public func undo() throws {
        try prepareToEdit()
        guard let step = history.undoSteps.last else {
            throw DocumentError(.nothingToUndo, "nothing to undo in \(info.displayName)")
        }
        try replay(step, as: .undo(of: step.target)) { history, _, inverses in
            history.recordUndo(.init(target: step.target, operations: inverses))
        }
    }

    /// Redoes the newest undone step, as a new change.
    ///
    /// - Throws: ``DocumentError`` `.nothingToRedo`, `.invalidOperation`, `.store`.
    public func redo() throws {
        try prepareToEdit()
        guard let step = history.redoSteps.last else {
            throw DocumentError(.nothingToRedo, "nothing to redo in \(info.displayName)")
        }
        try replay(step, as: .redo(of: step.target)) { history, change, inverses in
            history.recordRedo(.init(target: change.id, operations: inverses))
        }
    }

    /// Applies an undo or redo `step` as a new change with `intent`, recording in the history (with the change and
    /// the step's inverses) what undoes it in turn.
    private func replay(
        _ step: UndoHistory<Model.Operation>.Step, as intent: Edit.Intent,
        recording record: @escaping (inout UndoHistory<Model.Operation>, Change, [Model.Operation]) -> Void
    ) throws {
        let (updated, inverses) = try applying(step.operations)
        var newHistory = history
        let shown = head.hash
        let change = try append(
            .edit(Edit(operations: Model.Operation.encodeGroup(step.operations), intent: intent))
        ) { change in
            record(&newHistory, change, inverses)
            return newHistory
        }
        finish(change, model: updated, history: newHistory)
        updateConflictState(after: change, madeOn: shown)
        try settleStaleHead()
    }

    /// A change of this device's is made on its own latest change too, so while in conflict it may join competing
    /// heads besides the one it was made on (`shown`): the state must say so at once, not at the next refresh. The
    /// change is committed already, so a failed read leaves the state to the next refresh rather than failing.
    private func updateConflictState(after change: Change, madeOn shown: ChangeHash) {
        guard state.contains(.inConflict), change.parents != [shown] else { return }
        try? updateConflictState()
    }

    private func finish(_ change: Change, model updated: Model, history newHistory: UndoHistory<Model.Operation>) {
        model = updated
        history = newHistory
        head = change
        // The edit's time first: counting the change looks at the deadlines it sets.
        lastEditTime = library.clock.now()
        unsavedChanges += 1
        changesSinceCheckpoint += 1
    }

    /// The model with `operations` applied, and their inverses in undo order; the model itself is untouched.
    private func applying(_ operations: [Model.Operation]) throws(DocumentError) -> (Model, [Model.Operation]) {
        var trial = model
        var inverses: [Model.Operation] = []
        for operation in operations {
            do {
                inverses.append(try trial.apply(operation))
            } catch {
                throw DocumentError(
                    .invalidOperation, "the step no longer applies to \(info.displayName)", cause: error)
            }
        }
        return (trial, inverses.reversed())
    }

    /// Appends one change made on the version the model shows, writing the undo history in the same transaction.
    ///
    /// When the change would absorb a competing version of its author's (see ``implicitResolution(by:joining:)``), a
    /// resolution recording that version as discarded is appended first, in the same transaction.
    func append(
        _ kind: ChangeKind, author: Device? = nil, history: ((Change) -> UndoHistory<Model.Operation>)? = nil
    ) throws(DocumentError) -> Change {
        let joined = try joinableAbsorbedHeads()
        let resolution = try implicitResolution(by: author ?? library.store.localDevice, joining: joined)
        do {
            defer {
                sameStateHeads = []
                absorbedHeads = []
            }
            let parents = [head.hash] + sameStateHeads + joined + (resolution?.discarded ?? [])
            // Joining a delete that a concurrent edit overruled (as an absorbed head, or as the author's own head
            // a resolution discards): a restore on top records that the edit won.
            let joinsMore = !joined.isEmpty || !(resolution?.discarded.isEmpty ?? true)
            let restore = joinsMore && info.restoredByConcurrentEdit && author == nil
            let first = resolution.map { [ChangeKind.resolution($0)] } ?? []
            let kinds = first + [kind] + (restore ? [ChangeKind.lifecycle(.restore)] : [])
            let changes = try library.store.append(kinds, to: id, on: .heads(parents), author: author) { changes in
                guard let history else { return [:] }
                return [UndoHistory<Model.Operation>.stateKey: history(changes[first.count]).encoded()]
            }
            if resolution != nil { changesSinceCheckpoint += 1 }
            if restore { info.restoredByConcurrentEdit = false }
            for change in changes { noteAppended(change) }
            // The document's head is the last change (a restore changes no contents); undo names the edit.
            return changes.last!
        } catch {
            throw .store(error, "recording a change to \(info.displayName)")
        }
    }

    /// The absorbed heads (``absorbedHeads``) the next change can join: those the content rule (`PrimaryParentRule`)
    /// passes over beside the version shown and the heads that share its state. A head absorbed only because a
    /// head the change does not join includes its contents stays a head; joining it would make every other device
    /// replay the change on the wrong contents.
    func joinableAbsorbedHeads() throws(DocumentError) -> [ChangeHash] {
        guard !absorbedHeads.isEmpty else { return [] }
        let line = library.primaryParentRule(of: id)
        var shown = [head]
        for hash in sameStateHeads {
            if let change = try line.lookup(hash) { shown.append(change) }
        }
        var joinable: [ChangeHash] = []
        for hash in absorbedHeads {
            guard let change = try line.lookup(hash) else { continue }
            if try !line.carriesContents(change, beside: shown) { joinable.append(hash) }
        }
        return joinable
    }

    /// The resolution to record before `author`'s next change, if that change would otherwise make a competing
    /// version the document has shown disappear without a trace.
    ///
    /// A change is always made on its author's latest change too (a device's changes form one line; see
    /// `ChangeLogStore.append`). When that latest change is a head whose version lost (the document shows another
    /// one) and no other head holds the same contents, a change made on the version shown would absorb it: no
    /// conflict left, no resolution, nothing in the loss ledger. Editing the version shown is the author's implicit
    /// choice, so it is recorded as one: a `userChoice` resolution that keeps the version shown and discards the
    /// author's competing version (and only it: versions of other devices keep competing). Its parents are the
    /// version shown and the discarded head, so it syncs, and every device lists the discarded version in the
    /// loss ledger.
    ///
    /// - Complexity: no read when every change of the author the document has seen is in the shown version's past
    ///   (the usual case); otherwise a vector read, and the version groups, whose states are cached per head.
    /// - Throws: ``DocumentError`` `.store`.
    func implicitResolution(by author: Device, joining joined: [ChangeHash]) throws(DocumentError) -> Resolution? {
        // The usual case, read from memory: every change of the author the document has seen is in the version
        // shown, so none can be a competing one (the guard below would refuse whatever the log holds).
        guard seenVector[author.id] > head.vector[author.id] else { return nil }
        let latestSeq = try Self.readVector(of: id, in: library)[author.id]
        // Only a version the document has seen can be chosen against: a change of this device that another library
        // on the same directory appended unseen is built on, not discarded.
        guard latestSeq > head.vector[author.id], latestSeq <= seenVector[author.id] else { return nil }
        let latest: Change?
        do { latest = try library.store.change(ChangeID(device: author.id, seq: latestSeq), of: id) } catch {
            throw .store(error, "reading the log of \(info.displayName)")
        }
        guard let latest else { return nil }
        // The author's latest change only moved or renamed contents another head includes, but that head is not
        // joined: the content rule alone would follow the latest change's contents, not the version shown.
        if absorbedHeads.contains(latest.hash) && !joined.contains(latest.hash) {
            return Resolution(strategy: .userChoice, chosen: [head.hash], discarded: [latest.hash])
        }
        let groups = try versionGroups()
        guard !([head.hash] + sameStateHeads + joined).contains(latest.hash),
            let competing = groups.first(where: { $0.heads.contains { $0.hash == latest.hash } }),
            // Another head with the same contents (the shown one, say) keeps the version: nothing would be lost.
            competing.heads.count == 1
        else { return nil }
        return Resolution(strategy: .userChoice, chosen: [head.hash], discarded: [latest.hash])
    }
}
