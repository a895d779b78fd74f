/// A shortest line diff (Myers' algorithm): which ranges of lines one text replaces in another.
///
/// The diff is minimal: the lines it keeps are a longest common subsequence of the two texts. Lines are compared by
/// their Unicode scalars, terminators included (`"end"` and `"end\n"` differ). Before the search, lines that occur in
/// only one of the texts are set aside, since no alignment can keep them; typical edits (new and rewritten lines)
/// then cost almost nothing, and the search only works through lines that moved or repeat.
///
/// - Complexity: O((*N* + *M*) · *D*) time and O(*N* + *M*) space, where *N* and *M* count the lines and *D* is the
///   number of inserted plus deleted lines among those that occur in both texts (linear-space Myers: the middle
///   snake is found by searching from both ends, then each half is diffed on its own).
public enum LineDiff {
    /// One place where the texts differ: the base's lines in `base` are replaced by the version's lines in `version`.
    ///
    /// Indices are 0-based line positions. An empty `base` range is an insertion before base line `base.lowerBound`;
    /// an empty `version` range is a deletion. Both are never empty.
    public struct Hunk: Hashable, Sendable, CustomStringConvertible {
        /// The replaced lines of the base.
        public var base: Range<Int>
        /// The lines of the version that replace them.
        public var version: Range<Int>

        /// Creates a hunk.
        public init(base: Range<Int>, version: Range<Int>) {
            self.base = base
            self.version = version
        }

        /// `base 2..<4 → version 2..<5`.
        public var description: String { "base \(base) → version \(version)" }
    }

    /// The hunks that turn `base` into `version`, in order; between two hunks at least one line is kept.
    ///
    /// - Complexity: O((*N* + *M*) · *D*); see ``LineDiff``.
    public static func hunks(from base: [String], to version: [String]) -> [Hunk] {
        var symbols = LineSymbols()
        let baseSymbols = symbols.symbols(base)
        let versionSymbols = symbols.symbols(version)
        return hunks(from: baseSymbols, to: versionSymbols, symbolCount: symbols.count)
    }

    /// The hunks between two texts given as line numbers from one ``LineSymbols`` table.
    ///
    /// - Precondition: every symbol lies in `0..<symbolCount`.
    static func hunks(from base: [Int], to version: [Int], symbolCount: Int) -> [Hunk] {
        var matcher = Matcher(base: base, version: version, symbolCount: symbolCount)
        matcher.run()
        var hunks: [Hunk] = []
        var nextBase = 0
        var nextVersion = 0
        for (baseIndex, versionIndex) in zip(matcher.matchedBase, matcher.matchedVersion) {
            if baseIndex > nextBase || versionIndex > nextVersion {
                hunks.append(Hunk(base: nextBase..<baseIndex, version: nextVersion..<versionIndex))
            }
            nextBase = baseIndex + 1
            nextVersion = versionIndex + 1
        }
        if base.count > nextBase || version.count > nextVersion {
            hunks.append(Hunk(base: nextBase..<base.count, version: nextVersion..<version.count))
        }
        return hunks
    }
}

extension LineDiff {
    /// Finds a longest common subsequence of two symbol arrays, as the pairs of matched indices in increasing order.
    private struct Matcher {
        /// The symbols that occur in both inputs, and where each came from.
        private let a: [Int]
        private let b: [Int]
        private let aOrigin: [Int]
        private let bOrigin: [Int]

        /// Matched positions in the original arrays, in increasing order.
        private(set) var matchedBase: [Int] = []
        private(set) var matchedVersion: [Int] = []

        init(base: [Int], version: [Int], symbolCount: Int) {
            var inBase = [Bool](repeating: false, count: symbolCount)
            var inVersion = [Bool](repeating: false, count: symbolCount)
            for symbol in base { inBase[symbol] = true }
            for symbol in version { inVersion[symbol] = true }
            // A line missing from the other side can never be matched, so dropping it keeps the LCS unchanged.
            var a: [Int] = []
            var aOrigin: [Int] = []
            var b: [Int] = []
            var bOrigin: [Int] = []
            for (index, symbol) in base.enumerated() where inVersion[symbol] {
                a.append(symbol)
                aOrigin.append(index)
            }
            for (index, symbol) in version.enumerated() where inBase[symbol] {
                b.append(symbol)
                bOrigin.append(index)
            }
            self.a = a
            self.b = b
            self.aOrigin = aOrigin
            self.bOrigin = bOrigin
        }

        mutating func run() {
            match(aLow: 0, aHigh: a.count, bLow: 0, bHigh: b.count)
        }

        private mutating func emit(_ aIndex: Int, _ bIndex: Int) {
            matchedBase.append(aOrigin[aIndex])
            matchedVersion.append(bOrigin[bIndex])
        }

        /// Matches `a[aLow..<aHigh]` against `b[bLow..<bHigh]`, emitting pairs in order.
        private mutating func match(aLow: Int, aHigh: Int, bLow: Int, bHigh: Int) {
            var aLow = aLow
            var bLow = bLow
            var aHigh = aHigh
            var bHigh = bHigh
            while aLow < aHigh && bLow < bHigh && a[aLow] == b[bLow] {
                emit(aLow, bLow)
                aLow += 1
                bLow += 1
            }
            var suffix = 0
            while aLow < aHigh && bLow < bHigh && a[aHigh - 1] == b[bHigh - 1] {
                aHigh -= 1
                bHigh -= 1
                suffix += 1
            }
            if aLow < aHigh && bLow < bHigh, let (x, y) = middle(aLow: aLow, aHigh: aHigh, bLow: bLow, bHigh: bHigh),
                (x, y) != (aLow, bLow) && (x, y) != (aHigh, bHigh)
            {
                match(aLow: aLow, aHigh: x, bLow: bLow, bHigh: y)
                match(aLow: x, aHigh: aHigh, bLow: y, bHigh: bHigh)
            }
            for offset in 0..<suffix { emit(aHigh + offset, bHigh + offset) }
        }

        /// A point on a shortest edit path through the middle of the edit graph, found by running Myers' search
        /// forward from the start and backward from the end until the two fronts overlap (after diff-match-patch's
        /// `bisect`). `nil` only when the fronts never meet, which cannot happen for non-empty ranges.
        ///
        /// - Complexity: O((*n* + *m*) · *d*) for ranges of *n* and *m* symbols at edit distance *d*.
        private func middle(aLow: Int, aHigh: Int, bLow: Int, bHigh: Int) -> (Int, Int)? {
            let n = aHigh - aLow
            let m = bHigh - bLow
            let maxD = (n + m + 1) / 2
            let offset = maxD
            let length = 2 * maxD + 2
            // forward[offset + k]: the furthest x on diagonal k = x − y from the start; backward likewise from
            // the end.
            var forward = [Int](repeating: -1, count: length)
            var backward = [Int](repeating: -1, count: length)
            forward[offset + 1] = 0
            backward[offset + 1] = 0
            let delta = n - m
            // With an odd delta the fronts first overlap while extending forward, with an even one backward.
            let checkForward = delta % 2 != 0
            var forwardStart = 0
            var forwardEnd = 0
            var backwardStart = 0
            var backwardEnd = 0
            /// The furthest point on diagonal `k` in round `d` of the search forward (or, `reversed`, backward from
            /// the end), following the diagonal while the symbols match; recorded in `front`.
            func reach(_ front: inout [Int], _ k: Int, _ d: Int, reversed: Bool) -> (x: Int, y: Int) {
                let index = offset + k
                var x =
                    k == -d || (k != d && front[index - 1] < front[index + 1]) ? front[index + 1] : front[index - 1] + 1
                var y = x - k
                while x < n && y < m && (reversed ? a[aHigh - 1 - x] == b[bHigh - 1 - y] : a[aLow + x] == b[bLow + y]) {
                    x += 1
                    y += 1
                }
                front[index] = x
                return (x, y)
            }
            /// Whether a point reached lies inside the edit graph; one past its far side (or its bottom) narrows the
            /// diagonals that direction still searches from their end (or their start).
            func isInside(_ x: Int, _ y: Int, start: inout Int, end: inout Int) -> Bool {
                if x > n {
                    end += 2
                    return false
                }
                if y > m {
                    start += 2
                    return false
                }
                return true
            }
            for d in 0..<maxD {
                var k = -d + forwardStart
                while k <= d - forwardEnd {
                    let (x, y) = reach(&forward, k, d, reversed: false)
                    if isInside(x, y, start: &forwardStart, end: &forwardEnd) && checkForward {
                        let other = offset + delta - k
                        if other >= 0 && other < length && backward[other] != -1 && x >= n - backward[other] {
                            return (aLow + x, bLow + y)
                        }
                    }
                    k += 2
                }
                k = -d + backwardStart
                while k <= d - backwardEnd {
                    let (x, y) = reach(&backward, k, d, reversed: true)
                    if isInside(x, y, start: &backwardStart, end: &backwardEnd) && !checkForward {
                        let other = offset + delta - k
                        if other >= 0 && other < length && forward[other] != -1 {
                            let forwardX = forward[other]
                            let forwardY = forwardX - (other - offset)
                            if forwardX >= n - x { return (aLow + forwardX, bLow + forwardY) }
                        }
                    }
                    k += 2
                }
            }
            return nil
        }
    }
}
