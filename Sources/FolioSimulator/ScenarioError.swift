/// One problem in a scenario file, at a line and column, with a message that says what to write instead.
///
/// Its description reads like a compiler's: `Scenarios/offline.yaml:12:7: error: unknown key 'devise'; did you
/// mean 'device'?`.
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case malformedYAML, unknownKey, missingKey, wrongType, invalidValue, unknownDevice, unknownDocument
            case wrongModel, duplicateName, deviceNotRunning
        }
        private let value: Value

        /// The file is not valid YAML (or not UTF-8, or too large); nothing else in it was checked.
        public static let malformedYAML = Code(value: .malformedYAML)
        /// A key the format does not know at that place.
        public static let unknownKey = Code(value: .unknownKey)
        /// A required key is absent.
        public static let missingKey = Code(value: .missingKey)
        /// A value of the wrong shape: a list where a map belongs, a map where a name belongs, text where a number
        /// belongs.
        public static let wrongType = Code(value: .wrongType)
        /// A value of the right shape that is not allowed: a bad duration, a probability outside 0...1, an unknown
        /// word, an empty list, a contradiction.
        public static let invalidValue = Code(value: .invalidValue)
        /// A step names a device the scenario does not declare.
        public static let unknownDevice = Code(value: .unknownDevice)
        /// A step names a document that no earlier step creates.
        public static let unknownDocument = Code(value: .unknownDocument)
        /// An operation or an expectation that does not belong to the document's model.
        public static let wrongModel = Code(value: .wrongModel)
        /// A name given twice where names must be unique (devices, partition groups, lists).
        public static let duplicateName = Code(value: .duplicateName)
        /// A step needs a device that a `crash` stopped and no `restart` brought back, or restarts a device that runs.
        public static let deviceNotRunning = Code(value: .deviceNotRunning)

        /// The code's name, such as `unknownKey`.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// The scenario file, as the caller named it.
    public var file: String
    /// The 1-based line of the problem.
    public var line: Int
    /// The 1-based column of the problem, in Unicode scalars.
    public var column: Int
    /// What is wrong and what to write instead, as one sentence.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, file: String, line: Int, column: Int, _ message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: error: MESSAGE`.
    public var description: String {
        "\(file):\(line):\(column): error: \(message)"
    }
}

/// Every problem found in one scenario file, sorted by position, so that a person can fix them in one go.
///
/// ``ScenarioParser`` throws it when a file has at least one problem; it never holds none.
public struct ScenarioErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, sorted by line, then column; problems at one position keep the order they were found in.
    public let errors: [ScenarioError]

    /// Collects `errors`, sorting them by position.
    public init(_ errors: [ScenarioError]) {
        precondition(!errors.isEmpty, "ScenarioErrors holds at least one error")
        self.errors = errors.enumerated()
            .sorted { ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset) }
            .map(\.element)
    }

    /// One line per problem, in order.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
