import Foundation

/// Sixteen bytes that identify something for good: a device or a document.
///
/// Stored as two big-endian halves so that comparing two values compares their bytes in order, which is the order
/// Folio uses wherever identities break ties (for example in the causal order of changes).
public struct UUIDBytes: Hashable, Comparable, Sendable {
    /// The first eight bytes, big-endian.
    public let high: UInt64
    /// The last eight bytes, big-endian.
    public let low: UInt64

    /// Creates a value from its two big-endian halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a value from exactly sixteen bytes.
    ///
    /// - Precondition: `bytes.count == 16`.
    public init<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        precondition(bytes.count == 16, "a UUID has 16 bytes, not \(bytes.count)")
        if let value = bytes.withContiguousStorageIfAvailable({ UUIDBytes(UnsafeRawBufferPointer($0)) }) {
            self = value
        } else {
            self = Array(bytes).withUnsafeBytes { UUIDBytes($0) }
        }
    }

    /// Creates a value from sixteen bytes of raw memory.
    ///
    /// - Precondition: `buffer.count == 16`.
    public init(_ buffer: UnsafeRawBufferPointer) {
        precondition(buffer.count == 16, "a UUID has 16 bytes, not \(buffer.count)")
        self.init(
            high: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            low: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// Creates a value from the sixteen bytes of `data`.
    ///
    /// - Precondition: `data.count == 16`.
    public init(_ data: Data) {
        self = data.withUnsafeBytes { UUIDBytes($0) }
    }

    /// Parses the canonical text form, such as `6ba7b810-9dad-11d1-80b4-00c04fd430c8` (either case).
    ///
    /// Returns `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 36 else { return nil }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(32)
        for (offset, character) in text.utf8.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = UUIDBytes.hexValue(character) else { return nil }
            nibbles.append(value)
        }
        guard nibbles.count == 32, text.utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for index in stride(from: 0, to: 32, by: 2) {
            bytes.append(nibbles[index] << 4 | nibbles[index + 1])
        }
        self.init(bytes: bytes)
    }

    /// Calls `body` with the sixteen bytes in order, without allocating.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var bigEndian = (high.bigEndian, low.bigEndian)
        return try Swift.withUnsafeBytes(of: &bigEndian, body)
    }

    /// The sixteen bytes in order.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Orders by bytes, first to last.
    public static func < (lhs: UUIDBytes, rhs: UUIDBytes) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension UUIDBytes: CustomStringConvertible {
    /// The canonical lowercase text form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    public var description: String {
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }
        return hex[0..<4].joined() + "-" + hex[4..<6].joined() + "-" + hex[6..<8].joined() + "-"
            + hex[8..<10].joined() + "-" + hex[10..<16].joined()
    }
}
