/// Text from stores, libraries, scenario files and peers made safe to print on a terminal.
///
/// Device and document names, contents and messages that quote them are someone else's input. Printed raw, an ESC
/// or a C1 control starts an escape sequence (changing the window title, clearing the screen, moving the cursor,
/// writing to the clipboard on some terminals), a carriage return overwrites the line, and a bidirectional override
/// reorders what is shown. Each such scalar is printed as `\uXXXX`, which reads the same inside a JSON string, so
/// JSON output stays valid and decodes to the original text; everything printable (any script, emoji, combining
/// marks) is printed as it is.
enum TerminalText {
    /// `text` with every control character, bidirectional control and line or paragraph separator escaped; with
    /// `keepingLines`, line feeds and tabs stay (for reports and lists of messages, one per line).
    static func escaped(_ text: String, keepingLines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0, keepingLines: keepingLines) }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar, keepingLines: keepingLines) else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            result.append(
                contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
        }
        return String(result)
    }

    /// Whether a terminal acts on `scalar` instead of showing it. All of them are in the Basic Multilingual Plane,
    /// so four hex digits always suffice.
    private static func isUnsafe(_ scalar: Unicode.Scalar, keepingLines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: !keepingLines
        // C0 controls (ESC, BEL, CR, backspace…), DEL and C1 controls (CSI, OSC…).
        case 0x00..<0x20, 0x7F...0x9F: true
        // Bidirectional marks, embeddings, overrides and isolates; line and paragraph separators.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}

/// Prints `text`, escaped for the terminal (see ``TerminalText``), as one line.
func printEscaped(_ text: String) {
    print(TerminalText.escaped(text))
}
