import FolioCore

/// A line-based three-way merge (diff3) of versions made apart from a common ancestor.
///
/// Each version is diffed against the base (``LineDiff``). Changes whose base ranges overlap or touch, across all
/// versions, form one region; everything between regions is unchanged in every version and copied from the base.
/// A region is clean when the versions that changed it all made it read the same (a change made by one version
/// only, or the same change made by several, is taken once). Otherwise it is a conflict: the merged text keeps the
/// first version's lines there, and a ``Conflict`` records every version's lines.
///
/// Changes to adjacent lines (with no unchanged line between them) conflict, as in diff3 and git: neither side saw
/// the other's context. Lines keep their terminators, so the merged text joins back exactly; a last line without
/// `"\n"` stays without one.
///
/// Merging more than two versions looks at all of them at once, region by region, so the result does not depend on
/// an order of pairwise merges beyond "the first version's lines stand in a conflict", and each conflict lists every
/// version's lines in the order given.
///
/// - Complexity: O(*V* · (*N* + *M*) · *D*) for *V* versions (see ``LineDiff``), plus the output.
public enum Diff3 {
    /// A region of lines the versions changed differently.
    public struct Conflict: Hashable, Sendable, CustomStringConvertible {
        /// The ancestor's lines in the region (0-based; empty when the versions inserted different lines at one
        /// place).
        public var baseLines: Range<Int>
        /// Where the first version's lines for the region sit in the merged lines.
        public var mergedLines: Range<Int>
        /// The ancestor's text of the region.
        public var base: [String]
        /// Each version's text of the region, in the order the versions were given.
        public var values: [[String]]

        /// Creates a conflict record.
        public init(baseLines: Range<Int>, mergedLines: Range<Int>, base: [String], values: [[String]]) {
            self.baseLines = baseLines
            self.mergedLines = mergedLines
            self.base = base
            self.values = values
        }

        /// The region named in the ancestor's lines: `line 3`, `lines 3–5`, `after line 2`, `at the start`.
        ///
        /// Ancestor lines name the same place in every version and in the merged text, and stay valid when a report
        /// lists several conflicts.
        public var location: String { LineLocation.describe(baseLines) }

        /// The conflict as a `MergeConflict` whose location is ``location``, after `prefix` (such as `text.txt, `)
        /// when given; texts with no lines are `nil`.
        public func mergeConflict(locationPrefix prefix: String = "") -> MergeConflict {
            func text(_ lines: [String]) -> String? { lines.isEmpty ? nil : lines.joined() }
            return MergeConflict(location: prefix + location, base: text(base), values: values.map(text))
        }

        /// The ``mergeConflict(locationPrefix:)`` description.
        public var description: String { mergeConflict().description }
    }

    /// What a merge produced.
    public struct Result: Hashable, Sendable {
        /// The merged lines, with the first version's lines in each conflict.
        public var lines: [String]
        /// The regions still in conflict, in line order; empty when the merge is clean.
        public var conflicts: [Conflict]

        /// Creates a result.
        public init(lines: [String], conflicts: [Conflict]) {
            self.lines = lines
            self.conflicts = conflicts
        }

        /// The merged text.
        ///
        /// - Complexity: O(*n*) in its length.
        public var text: String { lines.joined() }

        /// Whether everything merged.
        public var isClean: Bool { conflicts.isEmpty }

        /// The conflicts as `MergeConflict` values, their locations after `prefix` when given.
        public func mergeConflicts(locationPrefix prefix: String = "") -> [MergeConflict] {
            conflicts.map { $0.mergeConflict(locationPrefix: prefix) }
        }
    }

    /// Merges `versions` of the text `base`.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*V* · (*N* + *M*) · *D*); see ``Diff3``.
    public static func merge(base: String, versions: [String]) -> Result {
        merge(baseLines: TextLines.split(base), versionLines: versions.map(TextLines.split))
    }

    /// Merges versions already cut into lines (``TextLines/split(_:)``).
    ///
    /// - Precondition: `versionLines` is not empty.
    /// - Complexity: O(*V* · (*N* + *M*) · *D*); see ``Diff3``.
    public static func merge(baseLines: [String], versionLines: [[String]]) -> Result {
        precondition(!versionLines.isEmpty, "a merge needs at least one version")
        var table = LineSymbols()
        let base = table.symbols(baseLines)
        let versions = versionLines.map { table.symbols($0) }
        let hunks = versions.map { LineDiff.hunks(from: base, to: $0, symbolCount: table.count) }

        var lines: [String] = []
        var conflicts: [Conflict] = []
        // Per version: the next hunk not yet placed in a region, and version index − base index outside hunks.
        var nextHunk = [Int](repeating: 0, count: versions.count)
        var shift = [Int](repeating: 0, count: versions.count)
        var copied = 0

        while let region = nextRegion(hunks, after: nextHunk) {
            lines.append(contentsOf: baseLines[copied..<region.lowerBound])
            var ranges: [Range<Int>] = []
            for version in versions.indices {
                let start = region.lowerBound + shift[version]
                while nextHunk[version] < hunks[version].count,
                    hunks[version][nextHunk[version]].base.lowerBound <= region.upperBound
                {
                    let hunk = hunks[version][nextHunk[version]]
                    shift[version] += hunk.version.count - hunk.base.count
                    nextHunk[version] += 1
                }
                ranges.append(start..<(region.upperBound + shift[version]))
            }
            let baseSlice = base[region]
            let changed = versions.indices.filter { !versions[$0][ranges[$0]].elementsEqual(baseSlice) }
            let first = changed.first ?? 0
            let agreed = changed.allSatisfy { versions[$0][ranges[$0]].elementsEqual(versions[first][ranges[first]]) }
            if agreed {
                lines.append(contentsOf: versionLines[first][ranges[first]])
            } else {
                let mergedStart = lines.count
                lines.append(contentsOf: versionLines[0][ranges[0]])
                conflicts.append(
                    Conflict(
                        baseLines: region, mergedLines: mergedStart..<lines.count, base: Array(baseLines[region]),
                        values: versions.indices.map { Array(versionLines[$0][ranges[$0]]) }))
            }
            copied = region.upperBound
        }
        lines.append(contentsOf: baseLines[copied...])
        return Result(lines: lines, conflicts: conflicts)
    }

    /// The base range of the next region: the earliest unplaced hunk, grown by every hunk of any version that
    /// overlaps or touches it, until none does. `nil` when every hunk is placed.
    private static func nextRegion(_ hunks: [[LineDiff.Hunk]], after next: [Int]) -> Range<Int>? {
        var lower = Int.max
        for version in hunks.indices where next[version] < hunks[version].count {
            lower = min(lower, hunks[version][next[version]].base.lowerBound)
        }
        guard lower != .max else { return nil }
        var upper = lower
        var cursor = next
        var grew = true
        while grew {
            grew = false
            for version in hunks.indices {
                while cursor[version] < hunks[version].count, hunks[version][cursor[version]].base.lowerBound <= upper {
                    upper = max(upper, hunks[version][cursor[version]].base.upperBound)
                    cursor[version] += 1
                    grew = true
                }
            }
        }
        return lower..<upper
    }
}
