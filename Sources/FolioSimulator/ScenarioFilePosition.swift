/// A line and column of a scenario file, where a ``ScenarioError`` was found.
public struct ScenarioFilePosition: Hashable, Sendable, CustomStringConvertible {
    /// The file's name, as given to the parser.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1.
    public var column: Int

    /// Creates a position.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`.
    public var description: String { "\(file):\(line):\(column)" }
}
