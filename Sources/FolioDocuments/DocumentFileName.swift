import FolioCore

/// The file names a document's display name and type give it: names kept safe whatever the display name holds,
/// since names and types from peers are shown as given and only checked here.
///
/// A file name is always one component directly in the container's directory, visible, and short enough for the
/// file system:
/// - `/`, `\`, control characters (NUL, line breaks, DEL, C1), line and paragraph separators, and the invisible
///   marks that reorder text (bidirectional controls, which can make `txt.exe` look like `exe.txt`) become `_`;
/// - leading dots become `_`, so a file is never hidden (and never `.` or `..`);
/// - an empty name, or one of spaces only, becomes `Untitled`;
/// - the name is cut at a character boundary (at a Unicode scalar boundary when its first character alone is too
///   long) so that the whole file name, with its number and extension, is at most 255 bytes of UTF-8 (NAME_MAX);
/// - an extension that is not 1 to 32 ASCII letters, digits, `-`, `_` or inner dots becomes `data`.
///
/// Ordinary names are kept as they are: `Notes` gives `Notes.txt`, then `Notes 2.txt`, `Notes 3.txt`…
struct DocumentFileName: Sendable {
    /// The longest file name most file systems take, in bytes of UTF-8.
    static let maximumBytes = 255
    /// The name's part of every file name, made safe but not yet cut to length.
    let stem: String
    /// The extension, without the dot.
    let fileExtension: String

    /// The file names of a document named `displayName` whose type prefers `fileExtension`.
    ///
    /// - Complexity: O(n) in the name's length.
    init(displayName: String, fileExtension: String) {
        self.fileExtension = Self.isPlainExtension(fileExtension) ? fileExtension : "data"
        var scalars = String.UnicodeScalarView()
        var leading = true
        for scalar in displayName.unicodeScalars {
            if leading && scalar == "." {
                scalars.append("_")
                continue
            }
            leading = false
            scalars.append(Self.isUnsafe(scalar) ? "_" : scalar)
        }
        let stem = String(scalars)
        self.stem = stem.allSatisfy(\.isWhitespace) ? "Untitled" : stem
    }

    /// The file name with `number`: `NAME.EXT` for 1, `NAME N.EXT` after (the name cut to leave room for both).
    func candidate(number: Int) -> String {
        let suffix = number == 1 ? "" : " \(number)"
        return
            "\(Self.prefix(of: stem, leaving: suffix.utf8.count + 1 + fileExtension.utf8.count))\(suffix).\(fileExtension)"
    }

    /// The file name made from the document's identity, `NAME ID.EXT`: when every numbered name is taken.
    func fallback(for id: DocumentID) -> String {
        let suffix = " \(id)"
        return
            "\(Self.prefix(of: stem, leaving: suffix.utf8.count + 1 + fileExtension.utf8.count))\(suffix).\(fileExtension)"
    }

    /// Whether `fileName` is one of these names (numbered up to `numbers`, or made from `id`).
    func contains(_ fileName: Substring, numbers: ClosedRange<Int>, id: DocumentID) -> Bool {
        guard fileName.hasSuffix(".\(fileExtension)") else { return false }
        if fileName == candidate(number: 1) || fileName == fallback(for: id) { return true }
        // `… N.EXT`: the number is read back and the name it gives compared, since a long name is cut.
        let stemAndNumber = fileName.dropLast(fileExtension.utf8.count + 1)
        guard let space = stemAndNumber.lastIndex(of: " ") else { return false }
        let digits = stemAndNumber[stemAndNumber.index(after: space)...]
        guard (1...6).contains(digits.utf8.count), digits.first != "0",
            digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let number = Int(digits), numbers.contains(number), number >= 2
        else { return false }
        return fileName == candidate(number: number)
    }

    /// The longest start of `text` that leaves `reserved` bytes of a file name free, cut at a character
    /// boundary, or at a scalar boundary when not even the first character fits.
    private static func prefix(of text: String, leaving reserved: Int) -> Substring {
        let budget = maximumBytes - reserved
        guard text.utf8.count > budget else { return text[...] }
        var used = 0
        var end = text.startIndex
        for character in text {
            let size = character.utf8.count
            guard used + size <= budget else { break }
            used += size
            end = text.index(after: end)
        }
        guard end == text.startIndex else { return text[..<end] }
        used = 0
        var scalarEnd = text.unicodeScalars.startIndex
        for scalar in text.unicodeScalars {
            guard used + scalar.utf8.count <= budget else { break }
            used += scalar.utf8.count
            scalarEnd = text.unicodeScalars.index(after: scalarEnd)
        }
        return text[..<scalarEnd]
    }

    /// Whether `scalar` must not be in a file name: a path separator, a control character, a line or paragraph
    /// separator, or a bidirectional control.
    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "/", "\\": return true
        case "\u{061C}", "\u{200E}", "\u{200F}", "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}": return true
        default:
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }

    /// Whether `fileExtension` is 1 to 32 ASCII letters, digits, `-`, `_` or dots, neither starting nor ending
    /// with a dot.
    static func isPlainExtension(_ fileExtension: String) -> Bool {
        let bytes = fileExtension.utf8
        guard (1...32).contains(bytes.count), bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else {
            return false
        }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }
}
