/// The line of Folio's source that raised an error (`#fileID` and `#line`), for bug reports.
public struct SourceLine: Hashable, Sendable, CustomStringConvertible {
    /// The file, as `#fileID` spells it (`FolioStore/ChangeLogStore+Append.swift`).
    public var file: String
    /// The line in that file.
    public var line: Int

    /// Creates a location.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// `file:line`.
    public var description: String { "\(file):\(line)" }
}
