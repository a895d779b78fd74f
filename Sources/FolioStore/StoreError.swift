import FolioCore
import GRDB

/// Why the change log refused an operation or a file.
///
/// Errors from SQLite are translated at the store's boundary: a caller sees what went wrong in Folio's terms
/// (`duplicateChange`, `notAStore`, …) with the SQLite error kept as the `cause`.
public typealias StoreError = FolioError<StoreErrorCode>

/// The kinds of ``StoreError``; more kinds may be added.
public struct StoreErrorCode: FolioErrorCode {
    /// The file exists but is not a Folio store (not SQLite, or SQLite holding other tables). It was not modified.
    public static let notAStore = Self(description: "notAStore")
    /// The store's bytes are damaged (SQLite reports corruption, or a row cannot be decoded).
    public static let corrupt = Self(description: "corrupt")
    /// The store was written by a newer Folio with a schema this build does not know.
    public static let newerFormat = Self(description: "newerFormat")
    /// The same change identity arrived with a different hash (a cloned or restored device reusing its
    /// identity). Nothing was overwritten.
    public static let integrity = Self(description: "integrity")
    /// A change that cannot belong to the log: bad parents, a lamport timestamp not above its parents', a
    /// hash that does not match its bytes.
    public static let invalidChange = Self(description: "invalidChange")
    /// The document has no changes in this store.
    public static let unknownDocument = Self(description: "unknownDocument")
    /// A checkpoint that does not fit the document's history.
    public static let checkpoint = Self(description: "checkpoint")
    /// Any other database failure (I/O error, disk full, permission denied…); see `cause`.
    public static let database = Self(description: "database")

    /// The code's name.
    public let description: String
}

extension StoreError {
    /// Translates an error thrown inside a store operation into a ``StoreError``.
    static func translating(
        _ error: any Error, while action: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) -> StoreError {
        switch error {
        case let error as StoreError:
            return error
        case let error as DatabaseError where error.resultCode == .SQLITE_NOTADB:
            return StoreError(
                .notAStore, "the file is not a SQLite database, so not a Folio store", cause: error, file: file,
                line: line)
        case let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT:
            return StoreError(
                .corrupt, "the store is damaged (SQLite reports corruption) while \(action())", cause: error,
                file: file, line: line)
        case let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED:
            return StoreError(
                .database,
                "the store is locked by another connection while \(action()) (a store opened with exclusive access holds its file until it is closed)",
                cause: error, file: file, line: line)
        case let error as CodecError:
            return StoreError(
                .corrupt, "a stored row cannot be decoded while \(action())", cause: error, file: file, line: line)
        default:
            return StoreError(.database, "the database failed while \(action())", cause: error, file: file, line: line)
        }
    }
}
