import Crypto
import Foundation

/// The SHA-256 of a change's canonical encoding: its tamper-evident name in the hash DAG.
public struct ChangeHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 32 bytes, as four big-endian words so that comparison is byte order.
    @usableFromInline let words: (UInt64, UInt64, UInt64, UInt64)

    /// Wraps 32 bytes.
    ///
    /// - Precondition: `bytes.count == 32`.
    public init<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        precondition(bytes.count == 32, "a change hash has 32 bytes, not \(bytes.count)")
        if let hash = bytes.withContiguousStorageIfAvailable({ ChangeHash(UnsafeRawBufferPointer($0)) }) {
            self = hash
        } else {
            self = Array(bytes).withUnsafeBytes { ChangeHash($0) }
        }
    }

    /// Wraps 32 bytes of raw memory.
    ///
    /// - Precondition: `buffer.count == 32`.
    public init(_ buffer: UnsafeRawBufferPointer) {
        precondition(buffer.count == 32, "a change hash has 32 bytes, not \(buffer.count)")
        words = (
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        )
    }

    /// Wraps the 32 bytes of `data`.
    ///
    /// - Precondition: `data.count == 32`.
    public init(_ data: Data) {
        self = data.withUnsafeBytes { ChangeHash($0) }
    }

    /// The SHA-256 of `data`.
    public init(hashing data: some Sequence<UInt8>) {
        var hasher = SHA256()
        hasher.update(data: Array(data))
        self.init(digest: hasher.finalize())
    }

    init(digest: SHA256.Digest) {
        self = digest.withUnsafeBytes { ChangeHash($0) }
    }

    /// Calls `body` with the 32 bytes in order, without allocating.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return try Swift.withUnsafeBytes(of: &bigEndian, body)
    }

    /// The 32 bytes in order.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The 32 bytes in order.
    public var data: Data { withUnsafeBytes { Data($0) } }

    /// The first eight bytes as a signed integer: a compact, well-spread key for indexes.
    public var prefix64: Int64 { Int64(bitPattern: words.0) }

    /// Orders by bytes.
    @inlinable public static func < (lhs: ChangeHash, rhs: ChangeHash) -> Bool { lhs.words < rhs.words }

    /// Equal when all 32 bytes are.
    @inlinable public static func == (lhs: ChangeHash, rhs: ChangeHash) -> Bool { lhs.words == rhs.words }

    /// Hashes the digest's first 16 bytes: they are a SHA-256 digest, evenly spread, so two words the seeded hasher
    /// mixes are as good as four at half the work (changes that collide in them take about 2^64 digests to find).
    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// The full lowercase hex text.
    public var description: String { hex }

    /// The full lowercase hex text.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The first 12 hex digits, for people.
    public var shortHex: String { String(hex.prefix(12)) }
}
