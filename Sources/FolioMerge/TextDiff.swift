/// How a version's text differs from its common ancestor, line by line: the diff a conflict report shows.
///
/// The changes are in line order and never touch: at least one unchanged line separates two of them. The diff is
/// minimal (see ``LineDiff``), so equal inputs always give the same changes.
public struct TextDiff: Hashable, Sendable, CustomStringConvertible {
    /// The changes, in line order.
    public var changes: [LineChange]

    /// The diff from `base` to `version`.
    ///
    /// - Complexity: O((*N* + *M*) · *D*); see ``LineDiff``.
    public init(base: String, version: String) {
        self.init(baseLines: TextLines.split(base), versionLines: TextLines.split(version))
    }

    /// The diff between two texts already cut into lines (``TextLines/split(_:)``).
    ///
    /// - Complexity: O((*N* + *M*) · *D*); see ``LineDiff``.
    public init(baseLines: [String], versionLines: [String]) {
        changes = LineDiff.hunks(from: baseLines, to: versionLines).map { hunk in
            LineChange(
                baseLines: hunk.base, versionLines: hunk.version,
                removed: Array(baseLines[hunk.base]), inserted: Array(versionLines[hunk.version]))
        }
    }

    /// Whether the texts are the same.
    public var isEmpty: Bool { changes.isEmpty }

    /// How many of the ancestor's lines were deleted or replaced.
    public var removedLineCount: Int { changes.reduce(0) { $0 + $1.removed.count } }

    /// How many of the version's lines are new.
    public var insertedLineCount: Int { changes.reduce(0) { $0 + $1.inserted.count } }

    /// The version, rebuilt by applying the changes to the ancestor's lines.
    ///
    /// - Precondition: `baseLines` has at least the lines the changes name.
    /// - Complexity: O(*N* + *M*).
    public func applied(to baseLines: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(baseLines.count + insertedLineCount - removedLineCount)
        var next = 0
        for change in changes {
            precondition(change.baseLines.upperBound <= baseLines.count, "the change \(change) is past the base's end")
            result.append(contentsOf: baseLines[next..<change.baseLines.lowerBound])
            result.append(contentsOf: change.inserted)
            next = change.baseLines.upperBound
        }
        result.append(contentsOf: baseLines[next...])
        return result
    }

    /// The version's text, rebuilt by applying the changes to the ancestor's text.
    ///
    /// - Complexity: O(*N* + *M*) in the texts' lengths.
    public func applied(to base: String) -> String {
        applied(to: TextLines.split(base)).joined()
    }

    /// One line per change, in line order.
    public var summary: [String] { changes.map(\.description) }

    /// The summary on one line, or `no changes`.
    public var description: String { isEmpty ? "no changes" : summary.joined(separator: "; ") }
}
