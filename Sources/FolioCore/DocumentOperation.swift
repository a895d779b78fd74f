import Foundation

/// One operation of a document model, with its own compact binary encoding.
public protocol DocumentOperation: Hashable, Sendable {
    /// Appends the operation's encoding.
    func encode(into writer: inout BinaryWriter)
    /// Reads one operation written by ``encode(into:)`` from untrusted bytes.
    ///
    /// - Throws: ``CodecError`` naming what is wrong.
    init(from reader: inout BinaryReader) throws
    /// Decodes a group written by ``encodeGroup(_:)``. The default reads each operation with ``init(from:)``; a type
    /// may read its groups in a pass of its own (a replay decodes thousands of one-operation groups), with the same
    /// operations and errors.
    ///
    /// - Throws: ``CodecError`` when the bytes are not such a group.
    static func decodeGroup(_ data: Data) throws -> [Self]
}

extension DocumentOperation {
    /// The operation's binary form alone, as ``encode(into:)`` writes it.
    ///
    /// The encodings are exact (texts as their UTF-8 bytes, maps in one canonical order), so two operations with
    /// the same binary form are the same operation: a model can compare and hash its operations by this.
    public var binaryForm: [UInt8] {
        var writer = BinaryWriter()
        encode(into: &writer)
        return writer.bytes
    }

    /// Encodes a group of operations (the payload of one ``Edit``): a count, then each operation.
    public static func encodeGroup(_ operations: [Self]) -> Data {
        var writer = BinaryWriter()
        encodeGroup(operations, into: &writer)
        return Data(writer.bytes)
    }

    /// Appends a group of operations, as ``encodeGroup(_:)`` writes it; operations that write blob references
    /// (``BinaryWriter/externalize(_:)``) note them in `writer`.
    public static func encodeGroup(_ operations: [Self], into writer: inout BinaryWriter) {
        writer.write(varint: UInt64(operations.count))
        for operation in operations { operation.encode(into: &writer) }
    }

    /// Decodes a group written by ``encodeGroup(_:into:)``, its blob references read from `blobs` (placeholders
    /// for those it lacks, noted in the lookup's ``BlobLookup/missing``); without a lookup, as
    /// ``decodeGroup(_:)``.
    ///
    /// - Throws: ``CodecError`` when the bytes are not such a group.
    public static func decodeGroup(_ data: Data, blobs: BlobLookup?) throws -> [Self] {
        guard let blobs else { return try decodeGroup(data) }
        return try decodeGroup(checking: data, blobs: blobs)
    }

    /// Decodes a group written by ``encodeGroup(_:)``.
    ///
    /// - Throws: ``CodecError`` when the bytes are not such a group.
    public static func decodeGroup(_ data: Data) throws -> [Self] {
        try decodeGroup(checking: data)
    }

    /// The typed core of ``decodeGroup(_:)``, for the package's decoders.
    package static func decodeGroup(checking data: Data, blobs: BlobLookup? = nil) throws(CodecError) -> [Self] {
        try BinaryReader.readingWhole(data, "the operations") { reader throws(CodecError) in
            reader.blobs = blobs
            let count = try reader.nextCount("the operation count", elementSize: 1, limit: 1 << 26)
            var operations: [Self] = []
            // The count is bounded by the bytes left (a byte per operation at least), but an operation takes more
            // room in memory than that: reserve for a thousand at most, and let the array grow with what decodes.
            operations.reserveCapacity(min(count, 1024))
            for _ in 0..<count { operations.append(try decodeOne(&reader)) }
            return operations
        }
    }

    /// One operation of a group, read by the model's ``init(from:)``; whatever that throws is a ``CodecError`` here
    /// (an error of another type becomes `invalidValue`, with the error as its cause).
    private static func decodeOne(_ reader: inout BinaryReader) throws(CodecError) -> Self {
        let start = reader.offset
        do {
            return try Self(from: &reader)
        } catch let error as CodecError {
            throw error
        } catch {
            throw CodecError(.invalidValue, "an operation cannot be decoded", cause: error, location: ByteOffset(start))
        }
    }
}
