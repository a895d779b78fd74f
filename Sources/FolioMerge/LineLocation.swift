/// How a range of lines is named for people: 1-based, with an en dash.
enum LineLocation {
    /// `line 3`, `lines 3–5`, or for an empty range (a place between lines) `after line 2` or `at the start`.
    static func describe(_ range: Range<Int>) -> String {
        switch range.count {
        case 0: range.lowerBound == 0 ? "at the start" : "after line \(range.lowerBound)"
        case 1: "line \(range.lowerBound + 1)"
        default: "lines \(range.lowerBound + 1)–\(range.upperBound)"
        }
    }

    /// `1 line`, `3 lines`.
    static func count(_ lines: Int) -> String {
        lines == 1 ? "1 line" : "\(lines) lines"
    }
}
