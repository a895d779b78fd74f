/// Escaping for the report's renderings: anything a device, a document or a scenario names is someone's input,
/// so every piece of it is escaped where it lands.
enum HTMLText {
    /// `text` safe in element content and in quoted attribute values; control characters other than tab and
    /// newline become U+FFFD, since HTML does not allow them.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value): result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Markdown is read on Unicode scalars (CommonMark counts backticks and finds pipes one code point at a time), so
/// every escape here works on scalars, never on Characters: a backtick or a pipe followed by a combining mark is one
/// Character, which a check per Character would not see, but still a backtick or a pipe to a Markdown reader.
enum MarkdownText {
    /// `text` as literal inline Markdown on one line: the characters that start emphasis, links, code, HTML,
    /// tables or entities are backslash-escaped, line breaks shown as `↵`, and control characters other than tab
    /// become U+FFFD, as in HTML.
    static func inline(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.shownOnOneLine.unicodeScalars {
            switch scalar {
            case "\\", "`", "*", "_", "[", "]", "<", ">", "|", "#", "~", "&", "!":
                result.append("\\")
                result.append(scalar)
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// `text` as a code span (literal, whatever it holds); `inTable` escapes the pipes that would end a cell.
    static func code(_ text: String, inTable: Bool = false) -> String {
        let body = text.shownOnOneLine
        let fence = String(repeating: "`", count: longestBacktickRun(in: body) + 1)
        let scalars = body.unicodeScalars
        // A backtick at either end would join the fence; a space at both ends would be stripped by the reader.
        let needsPadding =
            scalars.isEmpty || scalars.first == "`" || scalars.last == "`"
            || (scalars.first == " " && scalars.last == " " && scalars.contains { $0 != " " })
        var result = String.UnicodeScalarView()
        result.append(contentsOf: fence.unicodeScalars)
        if needsPadding { result.append(" ") }
        for scalar in scalars {
            // GitHub tables split cells before reading code spans, at any pipe without a backslash right before it.
            if inTable && scalar == "|" { result.append("\\") }
            result.append(scalar)
        }
        if needsPadding { result.append(" ") }
        result.append(contentsOf: fence.unicodeScalars)
        return String(result)
    }

    /// `lines` as a fenced code block with the info string `info`, fenced longer than any backtick run inside.
    static func block(_ lines: [String], info: String = "text") -> String {
        let shown = lines.map(\.shownOnOneLine)
        let fence = String(repeating: "`", count: max(3, (shown.map(longestBacktickRun).max() ?? 0) + 1))
        return ([fence + info] + shown + [fence]).joined(separator: "\n")
    }

    private static func longestBacktickRun(in text: String) -> Int {
        var longest = 0
        var current = 0
        for scalar in text.unicodeScalars {
            current = scalar == "`" ? current + 1 : 0
            longest = max(longest, current)
        }
        return longest
    }
}

extension String {
    /// The text on one line, read on Unicode scalars: each line break (LF, CR or CRLF) shown as `↵`, and the other
    /// control characters but tab as U+FFFD, as in HTML.
    var shownOnOneLine: String {
        var result = String.UnicodeScalarView()
        var afterCarriageReturn = false
        for scalar in unicodeScalars {
            defer { afterCarriageReturn = scalar == "\r" }
            switch scalar {
            case "\n" where afterCarriageReturn:
                continue
            case "\n", "\r":
                result.append("↵")
            case "\t":
                result.append(scalar)
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                result.append("\u{FFFD}")
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }
}
