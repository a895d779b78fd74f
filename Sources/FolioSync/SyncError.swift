import FolioCore
import FolioStore

/// Why a sync could not go on.
///
/// Errors are translated at the boundary: a store failure arrives as `store` with the ``StoreError`` as its cause,
/// a file failure in a shared folder as `io` with the errno text. A message or file that cannot be decoded is not
/// an error of the sync (it is treated as lost and counted in ``SyncReport``).
public struct SyncError: Error, CustomStringConvertible, @unchecked Sendable {
    // @unchecked: `cause` is only ever a Sendable error value (StoreError, CodecError), stored as `any Error`.

    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case store, integrity, io, malformed }
        private let value: Value

        /// The local store failed (see ``SyncError/cause``, a ``StoreError``), for example an integrity error when
        /// a peer sends a change whose identity is already used by another.
        public static let store = Code(value: .store)
        /// The peer's log and this one hold different changes under the same identities (a device identity reused
        /// by a cloned or restored device). Nothing was overwritten.
        public static let integrity = Code(value: .integrity)
        /// Reading or writing a shared folder failed (permission, disk full, not a directory…).
        public static let io = Code(value: .io)
        /// A file that must be well formed (a shared folder's identity) is not.
        public static let malformed = Code(value: .malformed)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What went wrong, as one sentence.
    public var message: String
    /// The underlying error, when there is one.
    public var cause: (any Error)?
    /// Where the error was raised.
    public var file: String
    /// Where the error was raised.
    public var line: Int

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// The message, followed by the cause when there is one.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }

    static func store(_ error: StoreError, while action: String, file: String = #fileID, line: Int = #line) -> SyncError {
        SyncError(.store, "the store failed while \(action)", cause: error, file: file, line: line)
    }
}
