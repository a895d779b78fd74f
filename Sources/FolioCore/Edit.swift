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

    /// Creates an edit.
    public init(operations: Data, intent: Intent = .edit) {
        self.operations = operations
        self.intent = intent
    }
}
