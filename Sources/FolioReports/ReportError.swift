/// Why a report could not be made or read.
public struct ReportError: Error, CustomStringConvertible, Sendable {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable { case notALibrary, unreadable, invalidJSON, newerSchema }
        private let value: Value

        /// The directory is not a Folio library (it has no `.folio/store.sqlite`, or that file is not a store).
        public static let notALibrary = Code(value: .notALibrary)
        /// The library exists but could not be read; see ``ReportError/cause``.
        public static let unreadable = Code(value: .unreadable)
        /// Text given as a JSON report is not one.
        public static let invalidJSON = Code(value: .invalidJSON)
        /// A JSON report of a schema version newer than this build knows.
        public static let newerSchema = Code(value: .newerSchema)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What went wrong, as one sentence.
    public var message: String
    /// The underlying error, when there is one.
    public var cause: (any Error & Sendable)?
    /// Where the error was made.
    public var file: String
    /// The line where the error was made.
    public var line: Int

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// The message, then the cause.
    public var description: String {
        guard let cause else { return message }
        return "\(message): \(cause)"
    }
}
