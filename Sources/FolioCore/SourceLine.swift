/// The line of Folio's source that raised an error (`#fileID` and `#line`), for bug reports.
///
/// It is a debugging aid, not part of what an error says: all source lines are equal, so two errors with the same
/// code and message are equal wherever they were raised. `FolioError`'s initializer with `file` and `line` records
/// it.
public struct SourceLine: Hashable, Sendable, CustomStringConvertible {
    /// The file, as `#fileID` spells it (`FolioStore/ChangeLogStore+Append.swift`).
    public var file: String
    /// The line in that file.
    public var line: Int

    /// Always true: where an error was raised does not change what it says.
    public static func == (lhs: SourceLine, rhs: SourceLine) -> Bool { true }

    /// Adds nothing: all source lines are equal.
    public func hash(into hasher: inout Hasher) {}

    /// `file:line`.
    public var description: String { "\(file):\(line)" }
}
