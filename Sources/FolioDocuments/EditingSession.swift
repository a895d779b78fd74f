import FolioCore
import FolioMerge

/// What an open document is in the middle of: the open group of edits (the next change, one undo step), the undo and
/// redo history, and when the last edit and the last commit happened. A value: the document owns one and decides
/// with it; nothing here reads the log or the clock.
struct EditingSession<Model: DocumentModel> {
    /// The edits not yet committed as a change.
    var group = EditGroup<Model>()
    /// The undo and redo steps of this device's changes.
    var history = UndoHistory<Model.Operation>()
    /// When the newest edit was made, if any was since the document opened.
    var lastEditTime: Timestamp?
    /// When the newest group was committed (or the document opened).
    var lastCommitTime: Timestamp
    /// When the oldest edit not yet committed as a change was made, if any waits.
    var firstUncommittedEditTime: Timestamp?
    /// The changes the open group's edits were committed as so far (while the library syncs live, edits are
    /// committed before their group, one undo step, ends), oldest first.
    var stepChanges: [ChangeID] = []
    /// Whether each of ``stepChanges`` was made on exactly the one before (the first on the version shown when the
    /// group began): then the undo step's recorded operations apply at the last of them, and a step of any model is
    /// saved by reference to them (a model that undoes by reversal names them either way).
    var stepIsChain = true
    /// The newest of ``stepChanges``.
    var lastStepChange: ChangeHash?

    /// Whether the model's undo takes back what a step's changes did in the text as it is then
    /// (`CharacterMergeable.textOperation(_:)` gives its text operations): a step of such a model names its changes
    /// even when others' changes arrived before or between them, and the group goes on when they arrive.
    static var undoesByReversal: Bool {
        guard let type = Model.self as? any CharacterMergeable.Type else { return false }
        return hasTextOperations(type)
    }

    private static func hasTextOperations<M: CharacterMergeable>(_ type: M.Type) -> Bool {
        M.textOperation(.delete(at: 0, count: 0)) != nil
    }

    /// A session with nothing edited yet, started at `now`.
    init(now: Timestamp) {
        lastCommitTime = now
    }

    /// Whether edits wait to be committed.
    @inline(__always)
    var hasOpenGroup: Bool { !group.isEmpty }
    /// Whether there is something to undo: the open group or a committed step.
    @inline(__always)
    var canUndo: Bool { hasOpenGroup || !history.undoSteps.isEmpty }
    /// Whether there is something to redo (never while a group is open: an edit ends the redo chain).
    @inline(__always)
    var canRedo: Bool { !hasOpenGroup && !history.redoSteps.isEmpty }

    /// Records an edit made at `now` in the open group.
    ///
    /// - Returns: whether the edit started the group.
    @inline(__always)
    mutating func record(_ operation: Model.Operation, inverse: Model.Operation, at now: Timestamp) -> Bool {
        let startsGroup = group.isEmpty
        let startsUncommitted = !group.hasUncommittedEdits
        group.add(operation, inverse: inverse)
        lastEditTime = now
        if startsUncommitted { firstUncommittedEditTime = now }
        return startsGroup || startsUncommitted
    }

    /// Notes that the open group's edits not yet committed were committed as `change`, made on `shown` (the group
    /// stays open).
    mutating func committedEdits(as change: Change, madeOn shown: ChangeHash) {
        group.markUncommittedCommitted()
        firstUncommittedEditTime = nil
        stepIsChain = continuesChain(change, madeOn: shown)
        stepChanges.append(change.id)
        lastStepChange = change.hash
    }

    /// Whether `change`, made on `shown`, extends ``stepChanges`` as a chain the undo step can name: each change made
    /// on exactly the one before (nothing arrived between them), and no more than one step names.
    func continuesChain(_ change: Change, madeOn shown: ChangeHash) -> Bool {
        stepIsChain && change.parents == [shown] && (lastStepChange.map { $0 == shown } ?? true)
            && stepChanges.count < UndoHistory<Model.Operation>.sourceLimit
    }

    /// The changes the open group's undo step names, with `change` (made on `shown`) last when given, and whether
    /// they are a chain; none (the step keeps its operations) when they are not a chain and the model does not
    /// undo by reversal, or when they are more than a step names.
    func stepSources(adding change: Change? = nil, madeOn shown: ChangeHash? = nil) -> (
        sources: [ChangeID], isChain: Bool
    ) {
        var sources = stepChanges
        var chain = stepIsChain
        if let change, let shown {
            chain = continuesChain(change, madeOn: shown)
            sources.append(change.id)
        }
        guard sources.count <= UndoHistory<Model.Operation>.sourceLimit else { return ([], true) }
        if chain || Self.undoesByReversal { return (sources, chain) }
        return ([], true)
    }

    /// Ends the open group once it is committed at `now`, with the history that records it.
    @inline(__always)
    mutating func committed(with newHistory: UndoHistory<Model.Operation>, at now: Timestamp) {
        history = newHistory
        group = EditGroup()
        lastCommitTime = now
        firstUncommittedEditTime = nil
        stepChanges = []
        stepIsChain = true
        lastStepChange = nil
    }

    /// `model`, which shows the open group's edits, without those not yet committed: the state at the document's
    /// head (the change the group builds on, or the last its edits were committed as).
    func withoutOpenGroup(_ model: Model) -> Model {
        guard group.hasUncommittedEdits else { return model }
        var state = model
        for operation in group.uncommittedUndoOperations { _ = try? state.apply(operation) }
        return state
    }
}
