/// Cutting a text into lines that keep their terminators, so that joining the lines gives back the text exactly.
///
/// A line ends after each `"\n"`; a `"\r\n"` line keeps its `"\r"` as part of the line, and a lone `"\r"` does not end
/// a line. The last line lacks a terminator when the text does not end with `"\n"`, and an empty text has no lines.
/// `lines.joined()` is always the original text, byte for byte.
public enum TextLines {
    /// The lines of `text`, each with its `"\n"` (the last one may have none).
    ///
    /// - Complexity: O(*n*) in the text's UTF-8 length.
    public static func split(_ text: String) -> [String] {
        let newline = UInt8(ascii: "\n")
        func cut(_ bytes: UnsafeBufferPointer<UInt8>) -> [String] {
            var lines: [String] = []
            var start = 0
            for index in bytes.indices where bytes[index] == newline {
                // Cutting just after an ASCII byte keeps every scalar whole, so decoding repairs nothing.
                lines.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...index]), as: UTF8.self))
                start = index + 1
            }
            if start < bytes.count {
                lines.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
            }
            return lines
        }
        if let lines = text.utf8.withContiguousStorageIfAvailable(cut) { return lines }
        return Array(text.utf8).withUnsafeBufferPointer(cut)
    }
}
