import FolioCore
import FolioStore

/// Why a document or library operation failed.
public struct DocumentError: Error, CustomStringConvertible, Sendable {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case notFound, closed, editingDisabled, invalidOperation, invalidContents, wrongType, nothingToUndo,
                nothingToRedo, store, save, invalidName, deleted, alreadyExists
        }
        private let value: Value

        /// No document with that identity or name.
        public static let notFound = Code(value: .notFound)
        /// The document is closed.
        public static let closed = Code(value: .closed)
        /// Editing is disabled (for example, the document is deleted).
        public static let editingDisabled = Code(value: .editingDisabled)
        /// The model refused the operation; nothing changed.
        public static let invalidOperation = Code(value: .invalidOperation)
        /// Contents (a file, an import, a baseline) that the model cannot load.
        public static let invalidContents = Code(value: .invalidContents)
        /// The document is not of the model's type.
        public static let wrongType = Code(value: .wrongType)
        /// Undo with nothing to undo.
        public static let nothingToUndo = Code(value: .nothingToUndo)
        /// Redo with nothing to redo.
        public static let nothingToRedo = Code(value: .nothingToRedo)
        /// The change log failed; see ``cause``.
        public static let store = Code(value: .store)
        /// Saving the file failed; see ``cause``. Nothing in the log was lost.
        public static let save = Code(value: .save)
        /// A display name the library does not give a document (empty, too long, with `/`, a control character or
        /// a leading `.`).
        public static let invalidName = Code(value: .invalidName)
        /// The document is deleted (restore it first).
        public static let deleted = Code(value: .deleted)
        /// Something of that name or identity already exists.
        public static let alreadyExists = Code(value: .alreadyExists)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What went wrong, as one sentence.
    public var message: String
    /// The underlying error, when there is one.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, then the cause.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }

    static func store(_ error: StoreError, _ action: String) -> DocumentError {
        DocumentError(.store, "the change log failed while \(action)", cause: error)
    }
}
