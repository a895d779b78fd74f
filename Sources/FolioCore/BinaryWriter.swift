import Foundation

/// Appends values to a byte buffer in Folio's binary format: unsigned LEB128 varints, zigzag for signed values,
/// length-prefixed byte strings.
public struct BinaryWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// When set, encoders that support blob references write byte strings of at least this many bytes as
    /// references (see ``externalize(_:)``); `nil`, the default: they write the bytes.
    public var blobThreshold: Int?
    /// The largest byte string written as a blob reference; a larger one is written itself (a peer refuses a change
    /// that refers to a blob above its limit). No bound by default.
    public var blobSizeLimit = Int.max
    /// The most blobs one encoding refers to; past it, byte strings are written themselves (a peer refuses a change
    /// that refers to more than its limit). No bound by default.
    public var blobCountLimit = Int.max
    /// Which package members a package's encoding may write as blob references (``DocumentContents/encode(into:)``):
    /// those the model keeps as opaque bytes (`DocumentModel.isBlobMember(_:)`); `nil`, the default: none.
    public var blobMembers: (@Sendable (PackagePath) -> Bool)?
    /// The blobs written as references, in the order first written, without repeats.
    public private(set) var blobReferences: [BlobReference] = []
    /// The bytes of the blobs written as references, except placeholders'.
    public private(set) var blobBytes: [BlobReference: Data] = [:]

    /// Creates an empty writer, optionally reserving room.
    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Forgets the bytes written, keeping their room for the next ones.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        blobReferences.removeAll()
        blobBytes.removeAll()
    }

    /// Notes a blob written as a reference.
    mutating func noteBlob(_ reference: BlobReference, bytes: Data?) {
        if let bytes { blobBytes[reference] = bytes }
        if !blobReferences.contains(reference) { blobReferences.append(reference) }
    }

    /// Appends one byte.
    public mutating func write(byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends an unsigned varint (1 to 10 bytes).
    public mutating func write(varint value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Appends a signed value as a zigzag varint, so small magnitudes of either sign stay short.
    public mutating func write(signed value: Int64) {
        write(varint: UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a fixed-width big-endian word.
    public mutating func write(fixed value: UInt64) {
        // Byte by byte: faster than copying the word's memory through `append(contentsOf:)` (every change's
        // canonical encoding, rebuilt when a segment is decoded, holds a dozen such words).
        bytes.append(UInt8(truncatingIfNeeded: value &>> 56))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 48))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 40))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 32))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 24))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 16))
        bytes.append(UInt8(truncatingIfNeeded: value &>> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends raw bytes, with no length.
    public mutating func write(raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// Appends a length-prefixed byte string.
    public mutating func write(lengthPrefixed data: some Collection<UInt8>) {
        write(varint: UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    /// Appends a length-prefixed byte string, copied from its storage at once.
    public mutating func write(lengthPrefixed data: Data) {
        write(varint: UInt64(data.count))
        data.withUnsafeBytes { bytes.append(contentsOf: $0) }
    }

    /// Appends a length-prefixed UTF-8 string.
    public mutating func write(string: String) {
        write(lengthPrefixed: Array(string.utf8))
    }
}
