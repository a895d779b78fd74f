import FolioCore

/// One problem in a scenario file, at a line and column, with a message that says what to write instead.
///
/// Its description reads like a compiler's: `Scenarios/offline.yaml:12:7: error: unknown key 'devise'; did you
/// mean 'device'?`.
public typealias ScenarioError = FolioError<ScenarioErrorCode>

/// The kinds of ``ScenarioError``; more kinds may be added.
public struct ScenarioErrorCode: FolioErrorCode {
    /// The file is not valid YAML (or not UTF-8, or too large); nothing else in it was checked.
    public static let malformedYAML = Self(description: "malformedYAML")
    /// A key the format does not know at that place.
    public static let unknownKey = Self(description: "unknownKey")
    /// A required key is absent.
    public static let missingKey = Self(description: "missingKey")
    /// A value of the wrong shape: a list where a map belongs, a map where a name belongs, text where a number
    /// belongs.
    public static let wrongType = Self(description: "wrongType")
    /// A value of the right shape that is not allowed: a bad duration, a probability outside 0...1, an unknown
    /// word, an empty list, a contradiction.
    public static let invalidValue = Self(description: "invalidValue")
    /// A step names a device the scenario does not declare.
    public static let unknownDevice = Self(description: "unknownDevice")
    /// A step names a document that no earlier step creates.
    public static let unknownDocument = Self(description: "unknownDocument")
    /// An operation or an expectation that does not belong to the document's model.
    public static let wrongModel = Self(description: "wrongModel")
    /// A name given twice where names must be unique (devices, partition groups, lists).
    public static let duplicateName = Self(description: "duplicateName")
    /// A step needs a device that a `crash` stopped and no `restart` brought back, or restarts a device that runs.
    public static let deviceNotRunning = Self(description: "deviceNotRunning")

    /// An error is located at a line and column of a scenario file.
    public typealias Location = ScenarioFilePosition

    /// As compilers write it: "file.yaml:3:7: error: the message".
    public static func describe(_ error: ScenarioError) -> String {
        let at = error.location
        return "\(at.file):\(at.line):\(at.column): error: \(error.message)"
    }

    /// The code's name.
    public let description: String
}

extension ScenarioError {
    /// Creates an error at a position of a scenario file.
    public init(_ code: Code, file: String, line: Int, column: Int, _ message: String) {
        self.init(code, message, location: ScenarioFilePosition(file: file, line: line, column: column))
    }

    /// The scenario file's name, as given to the parser.
    public var file: String { location.file }
    /// The line of the problem, from 1.
    public var line: Int { location.line }
    /// The column of the problem, from 1.
    public var column: Int { location.column }
}
