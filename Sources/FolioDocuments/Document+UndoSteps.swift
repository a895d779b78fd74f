import FolioCore
import FolioMerge
import FolioStore

extension Document {
    /// How a step that reverses `change`, made on the version shown (`shown`), is saved: by reference to `change`
    /// when its only parent is that version, so that the state the log replays for it is the state its operations
    /// were applied to; `nil` (the step keeps a copy of its operations) when the change was made on more (a competing
    /// head of this device's, a change another process appended, a resolution appended with it), where the state
    /// replayed at its primary parent may not be the one shown.
    ///
    /// A model whose undo takes back what changes did in the text as it is then (``undoesByReversal``) names the
    /// change either way, as a step that is not a chain when it was made on more.
    static func reference(to change: Change, madeOn shown: ChangeHash) -> (source: ChangeID?, isChain: Bool) {
        if change.parents == [shown] { return (change.id, true) }
        return EditingSession<Model>.undoesByReversal ? (change.id, false) : (nil, true)
    }

    /// The operations of an undo or redo step, and whether they hold wherever the model goes next (computed once
    /// for the step, to keep): those it holds, or, for a step read back from the store (which names only the
    /// changes it reverses), the inverses of those changes' operations, applied in order from the state the first
    /// was made on, replayed from the log.
    ///
    /// Those positions hold while the text is the one the step's last change made: its changes are a chain and no
    /// other device's change came since the first (this device's later steps were undone, newest first, so they
    /// left that text). Otherwise, for a model that undoes by reversal (``EditingSession/undoesByReversal``), the
    /// text's operations are those that take back what the step's changes typed and deleted in the text as it is
    /// now (`DocumentReplay.reversalEdits(of:copies:in:)`), with this device's later changes, which undid each
    /// other, taken back with them; the other parts' operations are the step's inverses.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when a change is no longer in the log, is not an edit, is not
    ///   made on the one before (when the inverses are computed along the changes), or its operations do not decode
    ///   or apply, or the reversal is refused (nothing changes then), `.store`.
    func operations(of step: UndoHistory<Model.Operation>.Step) throws(DocumentError) -> (
        operations: [Model.Operation], keep: Bool
    ) {
        var read: [Change]?
        if EditingSession<Model>.undoesByReversal, !step.sources.isEmpty,
            let type = Model.self as? any CharacterMergeable.Type
        {
            let changes = try sourceChanges(of: step)
            let shown = shownHeads()
            var vector = VersionVector()
            for head in shown { vector.merge(head.vector) }
            if !(step.isChain && Self.othersAddedNothing(to: vector, since: changes[0])) {
                return (try reversingOperations(type, of: step, changes: changes, in: shown, vector: vector), false)
            }
            read = changes
        }
        if let operations = step.operations { return (operations, false) }
        let changes: [Change]
        if let read { changes = read } else { changes = try sourceChanges(of: step) }
        for (previous, change) in zip(changes, changes.dropFirst()) where change.parents != [previous.hash] {
            throw DocumentError(
                .invalidOperation, "change \(change.id), which the step reverses, is not made on \(previous.id)")
        }
        return (try inverses(of: changes), true)
    }

    /// Whether `vector` (the version shown) holds no change of a device other than `first`'s author that `first`
    /// was not made on.
    static func othersAddedNothing(to vector: VersionVector, since first: Change) -> Bool {
        vector.entries.allSatisfy { $0.device == first.id.device || $0.seq <= first.vector[$0.device] }
    }

    /// The changes `step` reverses, read from the log: edits.
    private func sourceChanges(of step: UndoHistory<Model.Operation>.Step) throws(DocumentError) -> [Change] {
        var changes: [Change] = []
        for source in step.sources {
            let change: Change?
            do {
                change = try library.store.change(source, of: id)
            } catch {
                throw .store(error, "reading change \(source) for the undo history")
            }
            guard let change, case .edit = change.kind else {
                throw DocumentError(
                    .invalidOperation, "change \(source), which the step reverses, is not an edit in the log")
            }
            changes.append(change)
        }
        return changes
    }

    /// The operations that take back what `step`'s changes did in the text as the model shows it now, and, for a
    /// model with parts beside its text, the step's inverses on those parts.
    ///
    /// The step is the newest on its stack: every later change of this device in the version shown is an undo or a
    /// redo of a later step or of the steps those undid, and they cancel out. They are taken back with the step's
    /// changes, so that a character an undo typed again in place of one the step typed goes too. (A change another
    /// library or process of this device appended to the document meanwhile is taken for one of those.)
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when the text shown is not the one the log's graph computes
    ///   for the version shown (versions that overlap wait for a person), a change of the step is not in its history
    ///   (the version shown is another device's), or another device deleted some of what a later undo or redo typed
    ///   again (see `DocumentReplay.reversalEdits(of:copies:in:)`); nothing changes then. `.store`.
    private func reversingOperations<M: CharacterMergeable>(
        _ type: M.Type, of step: UndoHistory<Model.Operation>.Step, changes: [Change], in shown: [Change],
        vector: VersionVector
    ) throws(DocumentError) -> [Model.Operation] {
        guard let first = changes.first, let shownModel = model as? M else {
            throw DocumentError(.invalidOperation, "the step names no change")
        }
        var reversed: [Change] = []
        var copies: [Change] = []
        let sources = Set(step.sources)
        let author = first.id.device
        for seq in first.id.seq...max(first.id.seq, vector[author]) {
            let change: Change?
            do { change = try library.store.change(ChangeID(device: author, seq: seq), of: id) } catch {
                throw .store(error, "reading change \(author)#\(seq) for the undo history")
            }
            guard let change, case .edit(let edit) = change.kind else { continue }
            reversed.append(change)
            if edit.intent != .edit, !sources.contains(change.id) { copies.append(change) }
        }
        var replay = DocumentReplay<Model>(store: library.store, document: id, decoded: tracking.decodedOperations)
        replay.known = tracking.knownStates
        let reversal = try replay.reversalEdits(of: reversed, copies: copies, in: shown)
        guard reversal.text == shownModel.mergeableText else {
            throw DocumentError(
                .invalidOperation,
                "\(info.displayName) shows a text its versions' merge does not make (versions that overlap wait for a "
                    + "person): settle them before undoing")
        }
        var operations: [Model.Operation] = []
        for edit in reversal.edits {
            guard let operation = M.textOperation(edit) as? Model.Operation else {
                throw DocumentError(.invalidOperation, "the model has no operation for a text edit")
            }
            operations.append(operation)
        }
        guard M.hasPartsBesideText else { return operations }
        // The other parts (a package's images) are named, not placed: the step's inverses on them apply as they are.
        let inverses: [Model.Operation]
        if let recorded = step.operations {
            inverses = recorded
        } else {
            // Read back from the store: only the changes with operations beside the text are replayed for them.
            inverses = try self.inverses(
                of: changes.filter { Self.hasOperationsBesideText($0, type) }, eachOnItsOwnState: !step.isChain)
        }
        var edits: [TextEdit] = []
        for inverse in inverses {
            guard let operation = inverse as? M.Operation, !M.appendTextEdits(of: operation, to: &edits) else {
                continue
            }
            operations.append(inverse)
        }
        return operations
    }

    /// Whether `change` is an edit with an operation on a part beside the text (or one that does not decode).
    private static func hasOperationsBesideText<M: CharacterMergeable>(_ change: Change, _ type: M.Type) -> Bool {
        guard case .edit(let edit) = change.kind else { return false }
        var edits: [TextEdit] = []
        var others: [M.Operation] = []
        return !M.appendTextEdits(ofGroup: edit.operations, to: &edits, others: &others) || !others.isEmpty
    }

    /// The inverses of `changes`' operations, in the order to apply them: applied in order from the state the first
    /// was made on, replayed from the log, or, `eachOnItsOwnState`, each change's from the state it was made on.
    private func inverses(of changes: [Change], eachOnItsOwnState: Bool = false) throws(DocumentError)
        -> [Model.Operation]
    {
        guard !changes.isEmpty else { return [] }
        var inverses: [Model.Operation] = []
        if eachOnItsOwnState {
            for change in changes { inverses = try self.inverses(of: [change]) + inverses }
            return inverses
        }
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        var model = Model()
        let rule = replay.primaryParentRule(ReplayTail([]))
        if let parent = try DocumentReplay<Model>.primaryParent(of: changes[0], by: rule) {
            model = try replay.state(at: parent).model
        }
        for change in changes {
            guard case .edit(let edit) = change.kind,
                let forward = try? Model.Operation.decodeGroup(edit.operations, blobs: replay.blobLookup(for: change))
            else {
                throw DocumentError(.invalidOperation, "the operations of change \(change.id) do not decode")
            }
            for operation in forward {
                do {
                    inverses.append(try model.apply(operation))
                } catch {
                    throw DocumentError(
                        .invalidOperation, "change \(change.id) no longer applies to the state it was made on",
                        cause: error)
                }
            }
        }
        return inverses.reversed()
    }
}
