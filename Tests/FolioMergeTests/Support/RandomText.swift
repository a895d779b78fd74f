import FolioCore
import FolioTesting

/// Random texts and edits for the diff and merge properties.
enum RandomText {
    /// A few lines that repeat a lot, with and without terminators, so diffs must choose among many alignments.
    static let pool = ["a\n", "b\n", "c\n", "\n", "a", "é\n", "e\u{301}\n", "x\r\n"]

    /// Up to `maximum` lines from the pool.
    static func lines(_ maximum: Int, using generator: inout SplitMix64) -> [String] {
        (0..<generator.int(in: 0...maximum)).map { _ in generator.pick(pool) }
    }

    /// `lines` after a few random insertions, deletions and replacements.
    static func edited(_ lines: [String], using generator: inout SplitMix64) -> [String] {
        var result = lines
        for _ in 0..<generator.int(in: 0...4) {
            let position = generator.int(in: 0...result.count)
            let length = generator.int(in: 0...min(3, result.count - position))
            let inserted = (0..<generator.int(in: 0...3)).map { _ in generator.pick(pool) }
            result.replaceSubrange(position..<(position + length), with: inserted)
        }
        return result
    }

    /// The longest common subsequence's length, by dynamic programming (the reference for small inputs).
    static func lcsLength(_ a: [String], _ b: [String]) -> Int {
        guard !a.isEmpty && !b.isEmpty else { return 0 }
        var previous = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            var current = [Int](repeating: 0, count: b.count + 1)
            for j in 1...b.count {
                current[j] =
                    a[i - 1].utf8.elementsEqual(b[j - 1].utf8)
                    ? previous[j - 1] + 1 : max(previous[j], current[j - 1])
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Whether two line arrays hold the same scalars, line for line.
func same(_ left: [String], _ right: [String]) -> Bool {
    left.count == right.count && zip(left, right).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
}

/// Whether two texts hold the same scalars.
func same(_ left: String, _ right: String) -> Bool {
    left.utf8.elementsEqual(right.utf8)
}
