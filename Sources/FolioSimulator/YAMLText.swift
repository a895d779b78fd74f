/// Spells strings as YAML scalars for the canonical scenario writer.
///
/// A name made of letters, digits, `_`, `.`, `-` and single inner spaces (starting with a letter or `_`, and not a
/// word YAML gives another meaning, such as `null` or `yes`) is written plain; anything else is double-quoted, with
/// every character that YAML would not keep as it is (line breaks, control characters, the byte order mark, the
/// non-characters U+FFFE and U+FFFF) escaped. The parser reads scalars' text as written, so both forms read back to
/// the same scalars, and every scalar stays on one line.
enum YAMLText {
    /// `string` as a plain or double-quoted scalar.
    static func scalar(_ string: String) -> String {
        isPlainSafe(string) ? string : quoted(string)
    }

    /// `[a, b]`.
    static func flowList(_ items: [String]) -> String {
        "[" + items.joined(separator: ", ") + "]"
    }

    /// `{key: value, ...}`, for pairs already spelled as YAML.
    static func flowMap(_ pairs: [(key: String, value: String)]) -> String {
        "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// Words that a plain scalar would turn into a null or a boolean in YAML 1.1, in lowercase.
    private static let reservedWords: Set<String> = ["null", "true", "false", "yes", "no", "on", "off", "y", "n"]

    private static func isPlainSafe(_ string: String) -> Bool {
        let scalars = Array(string.unicodeScalars)
        guard let first = scalars.first, let last = scalars.last,
            first.isASCIILetter || first == "_", last != " ",
            !reservedWords.contains(string.lowercased())
        else { return false }
        for (index, scalar) in scalars.enumerated() {
            if scalar == " " {
                if scalars[index - 1] == " " { return false }
            } else if !(scalar.isASCIILetter || ("0"..."9").contains(scalar) || "_.-".unicodeScalars.contains(scalar)) {
                return false
            }
        }
        return true
    }

    private static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            default:
                if needsEscape(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result +=
                        scalar.value > 0xFFFF
                        ? "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
                        : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Whether YAML would not keep `scalar` as it is inside double quotes: it is not printable there (libyaml's
    /// test), or it is a line break (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR) that a reader folds.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20...0x7E: false
        case 0x85, 0x2028, 0x2029, 0xFEFF: true
        case 0xA0...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: false
        default: true
        }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool {
        ("a"..."z").contains(self) || ("A"..."Z").contains(self)
    }
}
