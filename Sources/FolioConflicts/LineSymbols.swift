/// A table that numbers distinct lines, so diffs compare small integers instead of strings.
///
/// Lines are the same when their Unicode scalars are (not by canonical equivalence as `String`'s `==`): a line
/// that changed `"é"` into `"e\u{301}"` changed. Numbers are given in order of first appearance, so the numbering,
/// and everything computed from it, does not depend on hashing.
struct LineSymbols {
    /// A line hashed and compared by its UTF-8 bytes.
    private struct ExactLine: Hashable {
        let text: String

        static func == (lhs: ExactLine, rhs: ExactLine) -> Bool {
            lhs.text.utf8.elementsEqual(rhs.text.utf8)
        }

        func hash(into hasher: inout Hasher) {
            let hashed: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
            if hashed == nil {
                for byte in text.utf8 { hasher.combine(byte) }
            }
        }
    }

    private var numbers: [ExactLine: Int] = [:]

    /// How many distinct lines have been numbered; every symbol is below this.
    var count: Int { numbers.count }

    /// The number of each line, numbering new ones.
    ///
    /// - Complexity: O(*n*) on average in the lines' total length.
    mutating func symbols(_ lines: [String]) -> [Int] {
        lines.map { line in
            let key = ExactLine(text: line)
            if let number = numbers[key] { return number }
            let number = numbers.count
            numbers[key] = number
            return number
        }
    }
}
