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

enum MarkdownText {
    /// `text` as literal inline Markdown on one line: the characters that start emphasis, links, code, HTML,
    /// tables or entities are backslash-escaped, and line breaks shown as `↵`.
    static func inline(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\", "`", "*", "_", "[", "]", "<", ">", "|", "#", "~", "&", "!": result += "\\\(character)"
            case "\n", "\r\n", "\r": result += "↵"
            default: result.append(character)
            }
        }
        return result
    }

    /// `text` as a code span (literal, whatever it holds); `inTable` escapes the pipes that would end a cell.
    static func code(_ text: String, inTable: Bool = false) -> String {
        var body = text.replacingLineBreaks()
        let fence = String(repeating: "`", count: longestRun(of: "`", in: body) + 1)
        if body.hasPrefix("`") || body.hasSuffix("`") || body.isEmpty { body = " \(body) " }
        if inTable { body = body.replacing("|", with: "\\|") }
        return fence + body + fence
    }

    /// `lines` as a fenced code block with the info string `info`, fenced longer than any backtick run inside.
    static func block(_ lines: [String], info: String = "text") -> String {
        let fence = String(repeating: "`", count: max(3, lines.map { longestRun(of: "`", in: $0) }.max().map { $0 + 1 } ?? 3))
        return ([fence + info] + lines.map { $0.replacingLineBreaks() } + [fence]).joined(separator: "\n")
    }

    private static func longestRun(of mark: Character, in text: String) -> Int {
        var longest = 0, current = 0
        for character in text {
            current = character == mark ? current + 1 : 0
            longest = max(longest, current)
        }
        return longest
    }
}

extension String {
    /// The text with each line break shown as `↵`, so it stays on one line.
    fileprivate func replacingLineBreaks() -> String {
        var result = ""
        for character in self {
            if character == "\n" || character == "\r\n" || character == "\r" { result += "↵" } else { result.append(character) }
        }
        return result
    }
}
