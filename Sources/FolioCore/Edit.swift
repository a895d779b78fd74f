import Foundation

/// A group of model operations.
public struct Edit: Hashable, Sendable {
    /// Why the operations were made.
    public enum Intent: Hashable, Sendable {
        /// A plain edit.
        case edit
        /// Undoes the change named: the operations are its inverse.
        case undo(of: ChangeID)
        /// Redoes the change named (after it was undone).
        case redo(of: ChangeID)
    }

    /// The operations, in the model's own encoding.
    public var operations: Data
    /// Why they were made.
    public var intent: Intent
    /// Whether the operations were made on the character merge of all the change's parents, not on one of them: the
    /// edit that merges versions which merged silently (no overlap, nothing for a person or a policy to decide), as
    /// an event in Eg-walker names every head it saw. Meaningful for a model that merges character by character and a
    /// change made on several parents; any other change reads it as a plain edit on its primary parent.
    public var isMadeOnMerge: Bool

    /// Creates an edit.
    public init(operations: Data, intent: Intent = .edit, isMadeOnMerge: Bool = false) {
        self.operations = operations
        self.intent = intent
        self.isMadeOnMerge = isMadeOnMerge
    }
}
