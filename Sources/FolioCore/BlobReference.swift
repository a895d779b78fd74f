import Foundation

/// A blob a change refers to by content instead of carrying it: the SHA-256 of its bytes and their count.
///
/// A change lists the blobs its operations or contents refer to (``Change/blobs``), so that stores and sync see
/// which blobs a change needs without decoding the model's bytes. The change's hash covers the references, not the
/// bytes: a device can check and log a change whose blob has not arrived yet, and stores keep each blob once however
/// many changes and documents refer to it.
public struct BlobReference: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The SHA-256 of the blob's bytes.
    public let hash: ContentHash
    /// The number of bytes.
    public let size: Int

    /// A reference to a blob with this hash and size.
    ///
    /// - Precondition: `size >= 0`.
    public init(hash: ContentHash, size: Int) {
        precondition(size >= 0, "a blob's size is not negative")
        self.hash = hash
        self.size = size
    }

    /// The reference to `bytes`.
    public init(to bytes: Data) {
        self.init(hash: ContentHash(hashing: bytes), size: bytes.count)
    }

    /// Whether `bytes` are the blob this refers to: their size and their hash are the reference's.
    public func isReferenced(by bytes: Data) -> Bool {
        bytes.count == size && ContentHash(hashing: bytes) == hash
    }

    /// Orders by hash, then by size (two references with one hash and different sizes cannot both be true, but a
    /// decoder must still order what a peer sends).
    public static func < (lhs: BlobReference, rhs: BlobReference) -> Bool {
        lhs.hash != rhs.hash ? lhs.hash < rhs.hash : lhs.size < rhs.size
    }

    /// The hash's first 12 hex digits and the size.
    public var description: String { "blob \(hash.hex.prefix(12)) (\(size) bytes)" }
}

extension BinaryWriter {
    /// Writes a blob reference: its 32 hash bytes, then its size as a varint.
    public mutating func write(_ reference: BlobReference) {
        write(raw: reference.hash.data)
        write(varint: UInt64(reference.size))
    }
}

extension BinaryReader {
    /// Reads a blob reference written by `BinaryWriter.write(_:)`, refusing a size above `limit`.
    ///
    /// The typed core of ``readBlobReference(limit:)``, for the package's decoders.
    package mutating func nextBlobReference(limit: Int) throws(CodecError) -> BlobReference {
        let hash = ContentHash(bytes: try nextBuffer(32, "a blob's hash"))
        let offset = self.offset
        let size = try nextVarint("a blob's size")
        guard size <= UInt64(limit) else {
            throw CodecError(.oversized, "a blob of \(size) bytes is beyond the limit of \(limit)", at: offset)
        }
        return BlobReference(hash: hash, size: Int(size))
    }

    /// Reads a blob reference written by `BinaryWriter.write(_:)`, refusing a size above `limit`.
    ///
    /// - Throws: ``CodecError`` when the input ends inside it or the size is beyond `limit`.
    public mutating func readBlobReference(limit: Int) throws -> BlobReference {
        try nextBlobReference(limit: limit)
    }
}
