/// The small subset of JSON the models' snapshots use, with a strict parser and a deterministic writer.
///
/// Folio writes these files itself, so the reader accepts exactly RFC 8259 JSON restricted to objects, arrays,
/// strings and integers; anything else (fractions, exponents, `true`, `null`, duplicate keys, nesting deeper than
/// ``maximumDepth``) is refused with a message, never guessed at. The writer sorts object keys by Unicode scalars, so
/// equal values always give the same bytes, on every platform.
enum JSONValue: Equatable {
    case string(String)
    case integer(Int)
    case array([JSONValue])
    /// Members in key order by scalars (as parsed or as built); keys are unique.
    case object([(key: String, value: JSONValue)])

    /// Nesting beyond this is refused, so hostile input cannot exhaust the stack.
    static let maximumDepth = 32

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a.isIdentical(to: b)
        case (.integer(let a), .integer(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key.isIdentical(to: $1.key) && $0.value == $1.value }
        default: false
        }
    }

    /// An object from members in any order.
    static func object(sorting members: [String: JSONValue]) -> JSONValue {
        .object(members.sorted { $0.key.precedesByScalars($1.key) }.map { (key: $0.key, value: $0.value) })
    }

    /// The members of an object as a dictionary, or `nil` for another kind of value.
    var members: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    // MARK: Writing

    /// The compact serialization followed by a newline.
    var serialized: String {
        var output = ""
        write(into: &output)
        output.append("\n")
        return output
    }

    private func write(into output: inout String) {
        switch self {
        case .string(let text):
            JSONValue.write(string: text, into: &output)
        case .integer(let value):
            output.append(String(value))
        case .array(let elements):
            output.append("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(",") }
                element.write(into: &output)
            }
            output.append("]")
        case .object(let members):
            output.append("{")
            for (index, member) in members.sorted(by: { $0.key.precedesByScalars($1.key) }).enumerated() {
                if index > 0 { output.append(",") }
                JSONValue.write(string: member.key, into: &output)
                output.append(":")
                member.value.write(into: &output)
            }
            output.append("}")
        }
    }

    private static func write(string: String, into output: inout String) {
        output.append("\"")
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case "\u{08}": output.append("\\b")
            case "\u{0C}": output.append("\\f")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        output.append("\"")
    }

    // MARK: Reading

    /// Why a text is not JSON of the accepted subset.
    struct ParseError: Error {
        /// What was wrong and where.
        var message: String
    }

    /// Parses `text`, which must hold exactly one value (whitespace around it is allowed).
    ///
    /// - Throws: ``ParseError`` naming the problem and its byte offset.
    init(parsing text: String) throws(ParseError) {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        self = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == parser.bytes.count else { throw parser.error("unexpected text after the value") }
    }

    private struct Parser {
        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        func error(_ message: String) -> ParseError {
            ParseError(message: "\(message) at byte \(offset)")
        }

        var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(ParseError) {
            guard current == byte else { throw error("expected \(what)") }
            offset += 1
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else {
                throw error("values nest deeper than \(JSONValue.maximumDepth)")
            }
            guard let byte = current else { throw error("the text ends where a value should be") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try integer())
            default: throw error("expected an object, an array, a string or an integer")
            }
        }

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            var members: [String: JSONValue] = [:]
            try items(closedBy: UInt8(ascii: "}"), "',' or '}' in an object") { parser throws(ParseError) in
                let keyOffset = parser.offset
                let key = try parser.string()
                parser.skipWhitespace()
                try parser.expect(UInt8(ascii: ":"), "':' after a key")
                parser.skipWhitespace()
                let member = try parser.value(depth: depth + 1)
                guard members.updateValue(member, forKey: key) == nil else {
                    throw ParseError(message: "the key \(key.debugDescription) appears twice at byte \(keyOffset)")
                }
            }
            return .object(sorting: members)
        }

        mutating func array(depth: Int) throws(ParseError) -> JSONValue {
            var elements: [JSONValue] = []
            try items(closedBy: UInt8(ascii: "]"), "',' or ']' in an array") { parser throws(ParseError) in
                elements.append(try parser.value(depth: depth + 1))
            }
            return .array(elements)
        }

        /// Reads the items of an object or an array from its opening byte to `close`, with `item` (white space
        /// around each is skipped); `missing`, what the error names when neither a `,` nor `close` follows one.
        mutating func items(
            closedBy close: UInt8, _ missing: String, _ item: (inout Parser) throws(ParseError) -> Void
        ) throws(ParseError) {
            offset += 1
            skipWhitespace()
            if current == close {
                offset += 1
                return
            }
            while true {
                skipWhitespace()
                try item(&self)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                try expect(close, missing)
                return
            }
        }

        mutating func integer() throws(ParseError) -> Int {
            let start = offset
            if current == UInt8(ascii: "-") { offset += 1 }
            guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
                throw error("expected a digit")
            }
            offset += 1
            if first != UInt8(ascii: "0") {
                while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
            }
            if let byte = current,
                byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            {
                throw error("only integers without leading zeros, fractions or exponents are accepted")
            }
            let text = String(decoding: bytes[start..<offset], as: UTF8.self)
            guard let value = Int(text) else {
                throw ParseError(message: "the integer \(text) is too large at byte \(start)")
            }
            return value
        }

        mutating func string() throws(ParseError) -> String {
            try expect(UInt8(ascii: "\""), "a string")
            // Runs between escapes are copied whole; they start and end at ASCII bytes of valid UTF-8, so they decode
            // exactly.
            var scalars = String.UnicodeScalarView()
            var runStart = offset
            while true {
                guard let byte = current else { throw error("the text ends inside a string") }
                switch byte {
                case UInt8(ascii: "\""):
                    scalars.append(contentsOf: String(decoding: bytes[runStart..<offset], as: UTF8.self).unicodeScalars)
                    offset += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    scalars.append(contentsOf: String(decoding: bytes[runStart..<offset], as: UTF8.self).unicodeScalars)
                    offset += 1
                    scalars.append(try escape())
                    runStart = offset
                case 0..<0x20:
                    throw error("a control character must be escaped in a string")
                default:
                    offset += 1
                }
            }
        }

        mutating func escape() throws(ParseError) -> Unicode.Scalar {
            guard let byte = current else { throw error("the text ends inside an escape") }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hexUnit()
                if (0xD800..<0xDC00).contains(unit) {
                    guard current == UInt8(ascii: "\\") else { throw error("an unpaired surrogate in a \\u escape") }
                    offset += 1
                    guard current == UInt8(ascii: "u") else { throw error("an unpaired surrogate in a \\u escape") }
                    offset += 1
                    let low = try hexUnit()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("an unpaired surrogate in a \\u escape") }
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard let scalar = Unicode.Scalar(unit) else { throw error("an unpaired surrogate in a \\u escape") }
                return scalar
            default:
                throw error("unknown escape '\\\(Character(Unicode.Scalar(byte)))'")
            }
        }

        mutating func hexUnit() throws(ParseError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw error("the text ends inside a \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[offset]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("expected four hex digits in a \\u escape")
                }
                value = value << 4 | UInt32(digit)
                offset += 1
            }
            return value
        }
    }
}
