import FolioConflicts
import FolioCore
import FolioStore
import Foundation

extension Document {
    /// Applies `operation` to the model and records it in the open group.
    ///
    /// The operation applies to ``model`` as the caller read it: what other devices sent meanwhile shows at the next
    /// refresh (a live sync refreshes open documents as it receives), and the edit merges with it at the place it
    /// meant. Build position-based operations from ``model`` inside one ``perform(_:)`` block, so that no refresh
    /// moves the model between reading it and editing it. An edit that starts a group first catches up with changes
    /// of this device that another library or process appended to the log, which it must build on.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when the model refuses it (nothing changes), `.closed`,
    ///   `.deleted`, or `.store` when committing the previous group failed.
    public func edit(_ operation: Model.Operation) throws(DocumentError) {
        try ensureOpen()
        let now = library.clock.now()
        let policy = library.autosave
        if policy.groupEnds(&editing, before: now) { try commit() }
        // A new group builds on everything this device wrote in the log (which may have deleted the document).
        if !editing.hasOpenGroup { try catchUp(onlyOwnChanges: true) }
        try ensureEditable()
        // Only a model with blob members has bounds to check (a keystroke of a text allocates nothing for it).
        if Model.hasBlobMembers { try library.checkBlobBounds(of: [operation], in: Model.self) }
        let inverse: Model.Operation
        do {
            inverse = try model.apply(operation)
        } catch {
            throw DocumentError(.invalidOperation, "the edit does not apply to \(info.displayName)", cause: error)
        }
        movePresence(by: operation, inverse: inverse)
        // The first edit of a group, or the first not yet committed, sets a deadline; the next ones only move
        // deadlines later (nothing to wake).
        if editing.record(operation, inverse: inverse, at: now) { dueWorkMayComeSooner() }
        if policy.groupingInterval == 0 {
            try commit()
        } else if library.syncsLive, policy.liveCommitDelay == 0 {
            try commitUncommittedEdits()
        }
        try autosaveIfDue(now: now)
    }

    /// Applies several operations as one group (one change, one undo step), committed before returning.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when one does not apply (then none is kept), and as ``edit(_:)``.
    public func edit(_ operations: [Model.Operation]) throws(DocumentError) {
        try prepareToEdit(onlyOwnChanges: true)
        try library.checkBlobBounds(of: operations, in: Model.self)
        let saved = (model, presenceTracking)
        var batch = EditGroup<Model>()
        for operation in operations {
            do {
                let inverse = try model.apply(operation)
                batch.add(operation, inverse: inverse)
                movePresence(by: operation, inverse: inverse)
            } catch {
                (model, presenceTracking) = saved
                announcePresence()
                throw DocumentError(.invalidOperation, "the edit does not apply to \(info.displayName)", cause: error)
            }
        }
        editing.group = batch
        editing.lastEditTime = library.clock.now()
        try commit()
    }

    /// Readies the document for a change made at once: commits the open group, catches up with the log
    /// (``catchUp(onlyOwnChanges:)``: only with this device's own changes for an edit whose positions the caller
    /// took from the model), and checks that it can be edited.
    func prepareToEdit(onlyOwnChanges: Bool = false) throws(DocumentError) {
        try ensureOpen()
        try commit()
        try catchUp(onlyOwnChanges: onlyOwnChanges)
        try ensureEditable()
    }

    /// Ends the open group, now: commits its edits not yet committed as one change, and records the group as one undo
    /// step (reversing every change its edits were committed as).
    ///
    /// - Throws: ``DocumentError`` `.store`; the group stays open then, to be committed later.
    public func commit() throws(DocumentError) {
        guard editing.hasOpenGroup else { return }
        let undoOperations = editing.group.undoOperations
        var newHistory = editing.history
        let earlier = editing.stepChanges
        guard earlier.isEmpty || editing.group.hasUncommittedEdits else {
            // Every edit of the group is a change already (committed while the library synced live): the step is
            // recorded alone.
            let named = editing.stepSources()
            newHistory.recordEdit(
                .init(
                    target: earlier.last!, sources: named.sources, isChain: named.isChain, operations: undoOperations))
            do {
                try library.localState.set([UndoHistory<Model.Operation>.stateKey: newHistory.encoded()], of: id)
            } catch {
                throw .store(error, "recording the undo history of \(info.displayName)")
            }
            editing.committed(with: newHistory, at: library.clock.now())
            return
        }
        let operations = editing.group.operations
        let shown = head.hash
        let session = editing
        let change = try append(library.editKind(operations, of: Model.self)) { change in
            let named = session.stepSources(adding: change, madeOn: shown)
            newHistory.recordEdit(
                .init(target: change.id, sources: named.sources, isChain: named.isChain, operations: undoOperations))
            return newHistory
        }
        editing.committed(with: newHistory, at: library.clock.now())
        try show(committed: change, madeOn: shown, firstOfGroup: earlier.isEmpty)
    }

    /// Commits the open group's edits not yet committed as a change, now, leaving the group open: one undo step,
    /// recorded when the group ends. What a document does ``AutosavePolicy/liveCommitDelay`` after an edit while its
    /// library syncs live, so the edit reaches other devices before its group ends.
    ///
    /// - Throws: ``DocumentError`` `.store`; the edits wait then, to be committed later.
    func commitUncommittedEdits() throws(DocumentError) {
        guard editing.group.hasUncommittedEdits else { return }
        let operations = editing.group.operations
        let shown = head.hash
        let change = try append(library.editKind(operations, of: Model.self))
        let firstOfGroup = editing.stepChanges.isEmpty
        editing.committedEdits(as: change, madeOn: shown)
        try show(committed: change, madeOn: shown, firstOfGroup: firstOfGroup)
    }

    /// Takes `change`, which edits of the open group were committed as on `shown`, as the head: the group counts as
    /// one unsaved change however many changes a live sync made of it (as UIDocument counts them), each of its
    /// changes toward the next checkpoint.
    private func show(committed change: Change, madeOn shown: ChangeHash, firstOfGroup: Bool) throws(DocumentError) {
        head = change
        // A selection made while these edits waited leaves now, named by this change, whose state is the text it was
        // made in (before a merge shown or a stale head may move the model).
        publishWaitingSelection()
        // A point every device's later changes may descend from: a merge's replay can start here (one in
        // `VersionTracking.stateSpacing` changes is kept).
        rememberShared(spacedOnly: true)
        if firstOfGroup { saving.noteChange() } else { saving.noteChangeOfCountedGroup() }
        try takeCheckpointIfNeeded(force: false)
        updateConflictState(after: change, madeOn: shown)
        try settleStaleHead()
    }

    /// Undoes the newest step: the open group, or else the newest committed change of this device still on the undo
    /// stack. The undo is itself a change carrying the inverse operations, so it syncs.
    ///
    /// - Throws: ``DocumentError`` `.nothingToUndo`, `.invalidOperation` when the inverse no longer applies (the
    ///   document changed underneath; nothing changes), `.store`.
    public func undo() throws(DocumentError) {
        try replayNewestStep(undoing: true)
        placePresence()
    }

    /// Redoes the newest undone step, as a new change.
    ///
    /// - Throws: ``DocumentError`` `.nothingToRedo`, `.invalidOperation`, `.store`.
    public func redo() throws(DocumentError) {
        try replayNewestStep(undoing: false)
        placePresence()
    }

    /// Applies the newest undo (or redo) step as a new change, recording in the history what undoes it in turn: the
    /// step's inverses, as a redo step (or an undo step naming the new change).
    private func replayNewestStep(undoing: Bool) throws(DocumentError) {
        try prepareToEdit()
        let steps = undoing ? editing.history.undoSteps : editing.history.redoSteps
        guard let step = steps.last else {
            throw DocumentError(
                undoing ? .nothingToUndo : .nothingToRedo,
                "nothing to \(undoing ? "undo" : "redo") in \(info.displayName)")
        }
        let intent: Edit.Intent = undoing ? .undo(of: step.target) : .redo(of: step.target)
        let (operations, keep) = try self.operations(of: step)
        if keep { editing.history.resolveNewest(undoing: undoing, operations: operations) }
        let (updated, inverses) = try applying(operations)
        var newHistory = editing.history
        let shown = head.hash
        let change = try append(library.editKind(operations, of: Model.self, intent: intent)) { change in
            let named = Self.reference(to: change, madeOn: shown)
            if undoing {
                newHistory.recordUndo(
                    .init(target: step.target, source: named.source, isChain: named.isChain, operations: inverses))
            } else {
                newHistory.recordRedo(
                    .init(target: change.id, source: named.source, isChain: named.isChain, operations: inverses))
            }
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
        editing.history = newHistory
        head = change
        // The edit's time first: counting the change looks at the deadlines it sets.
        editing.lastEditTime = library.clock.now()
        saving.noteChange()
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
    /// When the model shows versions merged silently, the change is made on all of them, and an edit is marked as
    /// made on their merge (`Edit.isMadeOnMerge`): it is the merge. When the change would absorb a competing version
    /// of its author's (see ``implicitResolution(by:joining:)``), a resolution recording that version as discarded
    /// is appended first, in the same transaction.
    ///
    /// - Parameter mergedWith: for a baseline of a file this device saved, the other heads whose merge with ``head``
    ///   the file held (`SavedFileRecord.merged`): the baseline is made on those, not on the version shown now.
    func append(
        _ kind: EncodedKind, author: Device? = nil, mergedWith saved: [ChangeHash]? = nil,
        history makeHistory: ((Change) -> UndoHistory<Model.Operation>)? = nil
    ) throws(DocumentError) -> Change {
        let merge = saved == nil ? tracking.mergeShown(at: head.hash) : nil
        var kind = kind
        if merge != nil, case .edit(var edit) = kind.kind {
            edit.isMadeOnMerge = true
            kind.kind = .edit(edit)
        }
        let joined = try joinableAbsorbedHeads()
        // Made on every version the model shows, the change loses none.
        let resolution =
            merge == nil ? try implicitResolution(by: author ?? library.store.localDevice, joining: joined) : nil
        do {
            defer { tracking.joined() }
            let others =
                saved.map { $0.isEmpty ? tracking.sameStateHeads : $0 } ?? merge?.others ?? tracking.sameStateHeads
            let parents = [head.hash] + others + joined + (resolution?.discarded ?? [])
            // Joining a delete that a concurrent edit overruled (as an absorbed head, a head of a merge, or as the
            // author's own head a resolution discards): a restore on top records that the edit won.
            let joinsMore =
                !joined.isEmpty || !(resolution?.discarded.isEmpty ?? true)
                || (merge.map { !$0.others.isEmpty } ?? false)
                || !(saved?.isEmpty ?? true)
            let restore = joinsMore && info.restoredByConcurrentEdit && author == nil
            let first = resolution.map { [EncodedKind(.resolution($0))] } ?? []
            let kinds = first + [kind] + (restore ? [EncodedKind(.lifecycle(.restore))] : [])
            let changes = try library.append(kinds, to: id, on: .heads(parents), author: author) { changes in
                guard let makeHistory else { return [:] }
                return [UndoHistory<Model.Operation>.stateKey: makeHistory(changes[first.count]).encoded()]
            }
            if resolution != nil { saving.changesSinceCheckpoint += 1 }
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
        guard !tracking.absorbedHeads.isEmpty else { return [] }
        let line = library.primaryParentRule(of: id)
        var shown = [head]
        for hash in tracking.mergeShown(at: head.hash)?.others ?? tracking.sameStateHeads {
            if let change = try line.lookup(hash) { shown.append(change) }
        }
        var joinable: [ChangeHash] = []
        for hash in tracking.absorbedHeads {
            guard let change = try line.lookup(hash) else { continue }
            if try !line.carriesContents(change, beside: shown) { joinable.append(hash) }
        }
        return joinable
    }

    /// The resolution to record before `author`'s next change, as the conflict engine decides
    /// (``FolioConflicts/ConflictEngine/implicitResolution(keeping:joining:absorbed:authorsLatest:)``), once the author's
    /// latest change is read.
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
        // The absorbed heads `joined` was chosen among, before the versions are grouped again.
        let absorbed = tracking.absorbedHeads
        // Grouped as they are: the change is made on the state the model shows, which merged nothing new.
        try versionGroups(mergingSilently: false)
        return tracking.conflicts.implicitResolution(
            keeping: head.hash, joining: tracking.sameStateHeads + joined, absorbed: absorbed, authorsLatest: latest)
    }
}
