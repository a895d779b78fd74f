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

    /// The largest blob a sync carries (one message's worth, `SyncMessage.Limits.blobMessageBytes`): 12 MiB. A
    /// library writes a larger member into its change.
    public static let largestSynced = 12 << 20

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

extension BlobReference {
    /// The 16 bytes a placeholder starts with.
    private static let placeholderMarker: [UInt8] = Array("\u{0}folio:blob-ref\u{0}".utf8)

    /// The bytes an unavailable blob reads as until it arrives: a fixed 16-byte marker, the hash and the size (8
    /// bytes, big-endian), 56 bytes in all.
    ///
    /// A model holds them where the blob's bytes go (an image's bytes, a package member's contents), so that a
    /// document whose blob has not arrived still opens. Encoders that write blob references
    /// (``BinaryWriter/externalize(_:)``) write a placeholder back as the reference it stands for, whatever the
    /// threshold, so editing a document with an unavailable blob never turns the placeholder into content.
    public var placeholder: Data {
        var bytes = Self.placeholderMarker
        bytes += hash.bytes
        withUnsafeBytes(of: UInt64(size).bigEndian) { bytes += $0 }
        return Data(bytes)
    }

    /// The reference `bytes` stand for, when they are a ``placeholder``.
    public init?(placeholder bytes: Data) {
        guard bytes.count == 56, bytes.starts(with: Self.placeholderMarker) else { return nil }
        let hash = ContentHash(bytes: bytes.dropFirst(16).prefix(32))
        let size = bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard size <= UInt64(Int.max) else { return nil }
        self.init(hash: hash, size: Int(size))
    }
}

/// The blobs a decoder may resolve references to (``BinaryReader/blob(_:)``), and the references it could not.
///
/// Not thread-safe: one lookup serves one decoding context at a time.
public final class BlobLookup {
    private var available: [BlobReference: Data]
    /// The references read that the lookup did not hold, in the order first read.
    public private(set) var missing: [BlobReference] = []
    /// The package members read as blob references (``DocumentContents/init(decoding:blobs:)``), in order.
    public private(set) var referencedMembers: [PackagePath] = []

    /// Notes that the member at `path` was read as a blob reference.
    package func noteReferenced(_ path: PackagePath) {
        referencedMembers.append(path)
    }
    private var missingSet: Set<BlobReference> = []

    /// A lookup holding `blobs`, each under its own reference.
    public init(_ blobs: some Sequence<Data> = [Data]()) {
        available = [:]
        for blob in blobs { available[BlobReference(to: blob)] = blob }
    }

    /// Adds a blob.
    public func insert(_ blob: Data) {
        available[BlobReference(to: blob)] = blob
    }

    /// Adds a blob already known to be `reference`'s.
    package func insert(_ blob: Data, as reference: BlobReference) {
        available[reference] = blob
    }

    /// Whether the lookup holds the blob.
    public func contains(_ reference: BlobReference) -> Bool { available[reference] != nil }

    /// The blob's bytes, or its ``BlobReference/placeholder`` (noted in ``missing``) when the lookup lacks it.
    public func bytes(of reference: BlobReference) -> Data {
        if let bytes = available[reference] { return bytes }
        if missingSet.insert(reference).inserted { missing.append(reference) }
        return reference.placeholder
    }
}

extension BinaryWriter {
    /// Whether `bytes` go into the encoding as a blob reference rather than themselves: when they are a
    /// ``BlobReference/placeholder`` (always, whatever the bounds), or when the writer writes blob references
    /// (``blobThreshold``) and they are at least that long and within ``blobSizeLimit`` and ``blobCountLimit``. Returns the reference to write (the caller writes it, in its model's form)
    /// and notes it in ``blobReferences`` and its bytes in ``blobBytes``; `nil`: write the bytes themselves.
    public mutating func externalize(_ bytes: Data) -> BlobReference? {
        // A placeholder is always its reference, so that an encoding has one form (decoders refuse a placeholder
        // written as bytes); a library refuses a change whose references pass its bounds.
        if let reference = BlobReference(placeholder: bytes) {
            noteBlob(reference, bytes: nil)
            return reference
        }
        guard let threshold = blobThreshold, bytes.count >= threshold, bytes.count <= blobSizeLimit,
            blobReferences.count < blobCountLimit
        else { return nil }
        let reference = BlobReference(to: bytes)
        noteBlob(reference, bytes: bytes)
        return reference
    }
}

extension BinaryReader {
    /// The bytes of the blob `reference` names: from the reader's ``blobs`` lookup, or its placeholder when the
    /// lookup lacks it (or the reader has none).
    public func blob(_ reference: BlobReference) -> Data {
        blobs?.bytes(of: reference) ?? reference.placeholder
    }
}
