import FolioTestDoubles
import Foundation

/// An editing trace (see Benchmarks/traces/README.md): patches `[position, deleted, inserted]` in Unicode scalars.
struct EditingTrace {
    struct Patch {
        var position: Int
        var deleted: Int
        var inserted: String
    }

    let patches: [Patch]
    let endContent: String

    /// Loads `Benchmarks/traces/NAME.json.gz`.
    init(named name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Benchmarks/traces/\(name).json.gz").standardizedFileURL
        let data = try Gunzip.decompress(Data(contentsOf: url))
        // A small scanner instead of JSONSerialization, whose object graph for 260,000 patches would dominate the
        // benchmark's peak memory.
        var scanner = TraceScanner(bytes: [UInt8](data))
        guard let end = scanner.string(afterKey: "endContent"), scanner.seek(toKey: "txns") else {
            throw BenchError("the trace at \(url.path) has no endContent or txns")
        }
        var patches: [Patch] = []
        while scanner.seek(toKey: "patches") {
            for patch in try scanner.patchList() {
                patches.append(Patch(position: patch.0, deleted: patch.1, inserted: patch.2))
            }
        }
        endContent = end
        self.patches = patches
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads the few shapes an editing trace needs from its JSON bytes: string values by key, and patch lists
/// `[[position, deleted, "text"], ...]`.
struct TraceScanner {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Moves past the next occurrence of `"key":`; false when there is none.
    mutating func seek(toKey key: String) -> Bool {
        let pattern = Array("\"\(key)\"".utf8)
        while offset + pattern.count <= bytes.count {
            if bytes[offset] == pattern[0] && Array(bytes[offset..<offset + pattern.count]) == pattern {
                offset += pattern.count
                skipWhitespace()
                if offset < bytes.count && bytes[offset] == UInt8(ascii: ":") {
                    offset += 1
                    return true
                }
            } else {
                offset += 1
            }
        }
        return false
    }

    /// The string value of the first `key` from the start.
    mutating func string(afterKey key: String) -> String? {
        offset = 0
        guard seek(toKey: key) else { return nil }
        skipWhitespace()
        let value = try? string()
        offset = 0
        return value
    }

    mutating func patchList() throws -> [(Int, Int, String)] {
        var result: [(Int, Int, String)] = []
        try expect("[")
        skipWhitespace()
        if bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return result
        }
        while true {
            try expect("[")
            let position = try integer()
            try expect(",")
            let deleted = try integer()
            try expect(",")
            skipWhitespace()
            let text = try string()
            try expect("]")
            result.append((position, deleted, text))
            skipWhitespace()
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect("]")
            return result
        }
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[offset]) { offset += 1 }
    }

    private mutating func expect(_ character: Unicode.Scalar) throws {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: character) else {
            throw BenchError("trace: expected '\(character)' at byte \(offset)")
        }
        offset += 1
    }

    private mutating func integer() throws -> Int {
        skipWhitespace()
        var value = 0
        let start = offset
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 {
            value = value * 10 + Int(bytes[offset] - 0x30)
            offset += 1
        }
        guard offset > start else { throw BenchError("trace: expected a number at byte \(start)") }
        return value
    }

    private mutating func string() throws -> String {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
            throw BenchError("trace: expected a string at byte \(offset)")
        }
        offset += 1
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
            utf8.removeAll(keepingCapacity: true)
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            if byte == UInt8(ascii: "\"") {
                flush()
                return String(scalars)
            }
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                continue
            }
            flush()
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), bytes[offset] == UInt8(ascii: "\\") {
                    offset += 2
                    let low = try hex4()
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: scalars.append(Unicode.Scalar(escape))
            }
        }
        throw BenchError("trace: unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
        else {
            throw BenchError("trace: bad \\u escape at byte \(offset)")
        }
        offset += 4
        return value
    }
}
