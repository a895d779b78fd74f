/// The one shape of every error Folio throws: what kind of problem (``code``), what went wrong in one sentence
/// (``message``), the error underneath (``cause``) and where it happened (``location``).
///
/// Each module names its errors by their kind of code: `StoreError` is `FolioError<StoreErrorCode>`, `SaveError` is
/// `FolioError<SaveErrorCode>`, and so on, so `catch let error as StoreError` catches exactly the store's errors and
/// `error.code` is one of the store's codes. An operation whose errors are all of one kind says so in its type
/// (`Document.save()` is `throws(DocumentError)`), so its caller reads `error.code` without a cast; one that passes on
/// errors it does not make (an app's resolver, a transport, a file system) throws untyped errors and names, in its
/// documentation, the type it throws itself.
///
/// Two errors are equal when their code, message and location are; causes are not compared, and the line of Folio
/// that raised an error (``SourceLine``) is not either.
public struct FolioError<Code: FolioErrorCode>: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public var code: Code
    /// What went wrong, as one sentence.
    public var message: String
    /// The underlying error, when there is one (a SQLite error under a store error, a file-system error under a
    /// save error…).
    public var cause: (any Error & Sendable)?
    /// Where the problem was found: the line of Folio that raised it, a byte offset in decoded bytes, a line of a
    /// scenario file, a file operation; the code's kind decides which.
    public var location: Code.Location

    /// Creates an error at a location.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, location: Code.Location) {
        self.code = code
        self.message = message
        self.cause = cause
        self.location = location
    }

    /// Creates an error located at the line of Folio that raises it.
    public init(
        _ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, file: String = #fileID, line: Int = #line
    ) where Code.Location == SourceLine {
        self.init(code, message, cause: cause, location: SourceLine(file: file, line: line))
    }

    /// The error in one line, as its kind of code writes it (by default the message, then the cause).
    public var description: String { Code.describe(self) }

    /// Whether two errors have the same code, message and location (causes are not compared).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.location == rhs.location
    }

    /// Hashes the code, message and location, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(location)
    }
}
