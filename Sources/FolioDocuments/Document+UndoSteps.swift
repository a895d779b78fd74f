import FolioCore
import FolioStore

extension Document {
    /// How a step that reverses `change`, made on the version shown (`shown`), is saved: by reference to `change`
    /// when its only parent is that version, so that the state the log replays for it is the state its operations
    /// were applied to; `nil` (the step keeps a copy of its operations) when the change was made on more (a competing
    /// head of this device's, a change another process appended, a resolution appended with it), where the state
    /// replayed at its primary parent may not be the one shown.
    static func reference(to change: Change, madeOn shown: ChangeHash) -> ChangeID? {
        change.parents == [shown] ? change.id : nil
    }

    /// The operations of an undo or redo step: those it holds, or, for a step read back from the store (which names
    /// only the changes it reverses), the inverses of those changes' operations, applied in order from the state the
    /// first was made on, replayed from the log.
    ///
    /// - Throws: ``DocumentError`` `.invalidOperation` when a change is no longer in the log, is not an edit, is not
    ///   made on the one before, or its operations do not decode or apply (nothing changes then), `.store`.
    func operations(of step: UndoHistory<Model.Operation>.Step) throws(DocumentError) -> [Model.Operation] {
        if let operations = step.operations { return operations }
        guard !step.sources.isEmpty else { return [] }
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
            if let previous = changes.last, change.parents != [previous.hash] {
                throw DocumentError(
                    .invalidOperation, "change \(source), which the step reverses, is not made on \(previous.id)")
            }
            changes.append(change)
        }
        let replay = DocumentReplay<Model>(store: library.store, document: id)
        var model = Model()
        let rule = replay.primaryParentRule(ReplayTail([]))
        if let parent = try DocumentReplay<Model>.primaryParent(of: changes[0], by: rule) {
            model = try replay.state(at: parent).model
        }
        var inverses: [Model.Operation] = []
        for change in changes {
            guard case .edit(let edit) = change.kind, let forward = try? Model.Operation.decodeGroup(edit.operations)
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
