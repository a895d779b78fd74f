/// One change a version made to its ancestor's text: lines inserted, deleted, or replaced, with their text.
///
/// Ranges are 0-based line positions; ``location`` and ``description`` name lines 1-based for people. Lines keep
/// their terminators.
public struct LineChange: Hashable, Sendable, CustomStringConvertible {
    /// What the change does to the ancestor's lines.
    public enum Kind: String, Hashable, Sendable {
        /// New lines between two of the ancestor's lines; `removed` is empty.
        case inserted
        /// Lines of the ancestor that are gone; `inserted` is empty.
        case deleted
        /// Lines of the ancestor replaced by other lines.
        case changed
    }

    /// The ancestor's lines this change replaces (empty for an insertion: the place before line `lowerBound`).
    public var baseLines: Range<Int>
    /// Where the replacement sits in the version (empty for a deletion).
    public var versionLines: Range<Int>
    /// The ancestor's text of `baseLines`.
    public var removed: [String]
    /// The version's text of `versionLines`.
    public var inserted: [String]

    /// Creates a change.
    ///
    /// - Precondition: the ranges and texts have matching lengths, and not both are empty.
    public init(baseLines: Range<Int>, versionLines: Range<Int>, removed: [String], inserted: [String]) {
        precondition(
            baseLines.count == removed.count && versionLines.count == inserted.count,
            "the ranges and the texts of a line change differ in length")
        precondition(!removed.isEmpty || !inserted.isEmpty, "a line change changes something")
        self.baseLines = baseLines
        self.versionLines = versionLines
        self.removed = removed
        self.inserted = inserted
    }

    /// Whether lines were inserted, deleted or replaced.
    public var kind: Kind {
        if removed.isEmpty { return .inserted }
        if inserted.isEmpty { return .deleted }
        return .changed
    }

    /// Where in the ancestor: `line 3`, `lines 3–5`, `after line 2` or `at the start` (for insertions).
    public var location: String { LineLocation.describe(baseLines) }

    /// One sentence: `inserted 2 lines after line 5`, `deleted line 3`, `replaced lines 3–4 with 1 line`.
    public var description: String {
        switch kind {
        case .inserted: "inserted \(LineLocation.count(inserted.count)) \(location)"
        case .deleted: "deleted \(location)"
        case .changed: "replaced \(location) with \(LineLocation.count(inserted.count))"
        }
    }
}
