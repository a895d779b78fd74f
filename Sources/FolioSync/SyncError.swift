import FolioCore
import FolioStore

/// Why a sync could not go on.
///
/// Errors are translated at the boundary: a store failure arrives as `store` with the `StoreError` as its cause,
/// a file failure in a shared folder as `io` with the errno text. A message or file that cannot be decoded is not
/// an error of the sync (it is treated as lost and counted in ``SyncReport``).
public typealias SyncError = FolioError<SyncErrorCode>

/// The kinds of ``SyncError``; more kinds may be added.
public struct SyncErrorCode: FolioErrorCode {
    /// The local store failed (see `SyncError.cause`, a `StoreError`), for example an integrity error when
    /// a peer sends a change whose identity is already used by another.
    public static let store = Self(description: "store")
    /// The peer's log and this one hold different changes under the same identities (a device identity reused
    /// by a cloned or restored device). Nothing was overwritten.
    public static let integrity = Self(description: "integrity")
    /// Reading or writing a shared folder failed (permission, disk full, not a directory…).
    public static let io = Self(description: "io")
    /// A file that must be well formed (a shared folder's identity) is not.
    public static let malformed = Self(description: "malformed")

    /// The message, then the cause; an `io` error's message already ends with the file system's reason, so it stands
    /// alone.
    public static func describe(_ error: SyncError) -> String {
        guard error.code != .io, let cause = error.cause else { return error.message }
        return "\(error.message): \(cause)"
    }

    /// The code's name.
    public let description: String
}

extension SyncError {
    /// What a call of the store's public API threw, as a `store` error: its error is the cause, a ``StoreError`` as
    /// the store documents, or any other error as it is.
    static func store(_ error: any Error, while action: String, file: String = #fileID, line: Int = #line) -> SyncError
    {
        SyncError(.store, "the store failed while \(action)", cause: error, file: file, line: line)
    }
}
