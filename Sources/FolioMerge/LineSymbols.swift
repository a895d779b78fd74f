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
            guard lhs.text.utf8.count == rhs.text.utf8.count else { return false }
            // Comparing the stored bytes: walking two `UTF8View`s index by index was most of a merge's symbol table.
            let compared = lhs.text.utf8.withContiguousStorageIfAvailable { left in
                rhs.text.utf8.withContiguousStorageIfAvailable { right in
                    equalBytes(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
                }
            }
            return compared.flatMap { $0 } ?? lhs.text.utf8.elementsEqual(rhs.text.utf8)
        }

        /// Whether two buffers of equal length hold the same bytes, compared eight at a time.
        private static func equalBytes(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
            var offset = 0
            while offset + 8 <= left.count {
                guard
                    left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                        == right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                else { return false }
                offset += 8
            }
            while offset < left.count {
                guard left[offset] == right[offset] else { return false }
                offset += 1
            }
            return true
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
        // Room for the first text's lines at once; the texts compared with it mostly repeat them.
        if numbers.isEmpty { numbers.reserveCapacity(lines.count) }
        return lines.map { line in
            let key = ExactLine(text: line)
            if let number = numbers[key] { return number }
            let number = numbers.count
            numbers[key] = number
            return number
        }
    }
}
