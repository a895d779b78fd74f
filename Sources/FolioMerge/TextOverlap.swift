/// A stretch of text that two versions changed in overlapping ways: both deleted some of the same scalars of the
/// text they have in common, and not in the same way (one word replaced two ways, a sentence rewritten twice, two
/// different stretches deleted across each other). A character merge does not interleave such edits: the stretch is
/// a conflict for a person (``TextEventGraph/merge(of:)``).
///
/// The stretch is a stretch of the two versions' *common text* (the text of the past they share) between two of its
/// scalars that both versions kept, or its start or end: it holds every scalar of the common text that either
/// version deleted there, and what either typed there.
public struct TextOverlap: Hashable, Sendable {
    /// A place in a text: a 1-based line and a 1-based column in Unicode scalars.
    public struct Position: Hashable, Sendable {
        /// The line, from 1.
        public var line: Int
        /// The column in the line, in scalars, from 1.
        public var column: Int

        /// Creates a position.
        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// The two versions, as indexes into the versions merged, the lower first.
    public var versions: [Int]
    /// The first scalar of the common text in the stretch.
    public var start: Position
    /// The last scalar of the common text in the stretch.
    public var end: Position
    /// The common text in the stretch.
    public var base: String
    /// Each merged version's text in the stretch, in the order the versions were given.
    public var texts: [String]

    /// Creates an overlap.
    public init(versions: [Int], start: Position, end: Position, base: String, texts: [String]) {
        self.versions = versions
        self.start = start
        self.end = end
        self.base = base
        self.texts = texts
    }

    /// Where the stretch is in the common text: `line 3, character 5`, `line 3, characters 5–8` or
    /// `line 3, character 5 to line 4, character 2`.
    public var location: String {
        if start.line != end.line {
            return "line \(start.line), character \(start.column) to line \(end.line), character \(end.column)"
        }
        if start.column == end.column { return "line \(start.line), character \(start.column)" }
        return "line \(start.line), characters \(start.column)–\(end.column)"
    }
}

/// A character merge of several versions (``TextEventGraph/merge(of:)``).
public struct TextMerge: Hashable, Sendable {
    /// The merged text: every version's edits, character by character, except in the stretches where two versions
    /// overlap, which show the first of the two versions' text.
    public var text: String
    /// Where two versions overlap, in the order of the list, then of the pairs of versions; empty when the merge is
    /// clean.
    public var overlaps: [TextOverlap]

    /// Creates a merge.
    public init(text: String, overlaps: [TextOverlap]) {
        self.text = text
        self.overlaps = overlaps
    }

    /// Whether no two versions overlap.
    public var isClean: Bool { overlaps.isEmpty }
}
