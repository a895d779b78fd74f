import FolioCore
import FolioStore

/// Why a document or library operation failed.
public typealias DocumentError = FolioError<DocumentErrorCode>

/// The kinds of ``DocumentError``; more kinds may be added.
public struct DocumentErrorCode: FolioErrorCode {
    /// No document with that identity or name.
    public static let notFound = Self(description: "notFound")
    /// The document is closed.
    public static let closed = Self(description: "closed")
    /// Editing is disabled (for example, the document is deleted).
    public static let editingDisabled = Self(description: "editingDisabled")
    /// The model refused the operation; nothing changed.
    public static let invalidOperation = Self(description: "invalidOperation")
    /// Contents (a file, an import, a baseline) that the model cannot load.
    public static let invalidContents = Self(description: "invalidContents")
    /// The document is not of the model's type.
    public static let wrongType = Self(description: "wrongType")
    /// Undo with nothing to undo.
    public static let nothingToUndo = Self(description: "nothingToUndo")
    /// Redo with nothing to redo.
    public static let nothingToRedo = Self(description: "nothingToRedo")
    /// The change log failed; the error's `cause` says why.
    public static let store = Self(description: "store")
    /// Saving the file failed; the error's `cause` says why. Nothing in the log was lost.
    public static let save = Self(description: "save")
    /// A display name the library does not give a document (empty, too long, with `/`, a control character or
    /// a leading `.`).
    public static let invalidName = Self(description: "invalidName")
    /// The document is deleted (restore it first).
    public static let deleted = Self(description: "deleted")
    /// The document is open (or being opened) on this device, and the operation needs it closed.
    public static let open = Self(description: "open")
    /// Something of that name or identity already exists.
    public static let alreadyExists = Self(description: "alreadyExists")

    /// The code's name.
    public let description: String
}

extension DocumentError {
    /// What a call of the store's public API threw, as a `store` error: its error is the cause, a `StoreError` as
    /// the store documents, or any other error as it is.
    static func store(_ error: any Error, _ action: String, file: String = #fileID, line: Int = #line) -> DocumentError
    {
        DocumentError(.store, "the change log failed while \(action)", cause: error, file: file, line: line)
    }
}
