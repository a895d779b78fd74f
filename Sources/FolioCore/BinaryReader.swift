import Foundation

/// Reads values written by ``BinaryWriter`` from untrusted bytes: every read checks bounds and throws
/// ``CodecError`` instead of trapping.
public struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public private(set) var offset: Int
    /// The blobs that references in the bytes resolve to (``blob(_:)``); `nil`: every reference reads as its
    /// placeholder.
    public var blobs: BlobLookup?

    /// Reads from `bytes`, which must outlive the reader.
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        offset = 0
    }

    /// How many bytes are left.
    public var remaining: Int { bytes.count - offset }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// Reads one byte.
    ///
    /// The typed core of ``readByte``, for the package's decoders.
    package mutating func nextByte(_ what: @autoclosure () -> String) throws(CodecError) -> UInt8 {
        guard offset < bytes.count else { throw CodecError(.truncated, "the input ends inside \(what())", at: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads an unsigned varint in its shortest form.
    ///
    /// The typed core of ``readVarint``, for the package's decoders.
    package mutating func nextVarint(_ what: @autoclosure () -> String) throws(CodecError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else {
                throw CodecError(.truncated, "the input ends inside \(what())", at: start)
            }
            let byte = bytes[offset]
            offset += 1
            if shift == 63 && byte > 1 {
                throw CodecError(.oversized, "\(what()) does not fit in 64 bits", at: start)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    throw CodecError(.notCanonical, "\(what()) is a padded varint", at: start)
                }
                return result
            }
            shift += 7
        }
    }

    /// Reads a zigzag varint.
    ///
    /// The typed core of ``readSigned``, for the package's decoders.
    package mutating func nextSigned(_ what: @autoclosure () -> String) throws(CodecError) -> Int64 {
        let raw = try nextVarint(what())
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Reads a fixed-width big-endian word.
    ///
    /// The typed core of ``readFixed``, for the package's decoders.
    package mutating func nextFixed(_ what: @autoclosure () -> String) throws(CodecError) -> UInt64 {
        UInt64(bigEndian: try nextBuffer(8, what()).loadUnaligned(as: UInt64.self))
    }

    /// Reads exactly `count` raw bytes, returned as a view into the input (valid as long as the input is).
    ///
    /// The typed core of ``readBuffer``, for the package's decoders.
    package mutating func nextBuffer(_ count: Int, _ what: @autoclosure () -> String) throws(CodecError)
        -> UnsafeRawBufferPointer
    {
        guard count >= 0 else {
            throw CodecError(.invalidValue, "\(what()) has the negative length \(count)", at: offset)
        }
        guard count <= remaining else {
            throw CodecError(
                .truncated, "the input ends inside \(what()) (\(count) bytes needed, \(remaining) left)", at: offset)
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// Reads exactly `count` raw bytes.
    ///
    /// The typed core of ``readRaw``, for the package's decoders.
    package mutating func nextRaw(_ count: Int, _ what: @autoclosure () -> String) throws(CodecError) -> ArraySlice<
        UInt8
    > {
        ArraySlice(try nextBuffer(count, what()))
    }

    /// Reads a count that announces `elementSize`-byte (at least) elements, refusing counts the input or `limit`
    /// cannot hold, so that a hostile count never causes a large allocation.
    ///
    /// The count is compared with what the remaining bytes can hold by division, which cannot overflow whatever the
    /// count and element size.
    ///
    /// The typed core of ``readCount``, for the package's decoders.
    package mutating func nextCount(_ what: @autoclosure () -> String, elementSize: Int, limit: Int) throws(CodecError)
        -> Int
    {
        let start = offset
        let count = try nextVarint(what())
        guard count <= UInt64(max(limit, 0)) else {
            throw CodecError(.oversized, "\(what()) is \(count), more than the limit of \(limit)", at: start)
        }
        guard count <= UInt64(remaining) / UInt64(max(elementSize, 1)) else {
            throw CodecError(
                .truncated, "\(what()) is \(count), more than the \(remaining) bytes left can hold", at: start)
        }
        return Int(count)
    }

    /// Reads a length-prefixed byte string of at most `limit` bytes.
    ///
    /// The typed core of ``readLengthPrefixed``, for the package's decoders.
    package mutating func nextLengthPrefixed(_ what: @autoclosure () -> String, limit: Int) throws(CodecError) -> Data {
        let count = try nextCount("the length of \(what())", elementSize: 1, limit: limit)
        return Data(try nextBuffer(count, what()))
    }

    /// Reads a length-prefixed UTF-8 string of at most `limit` bytes.
    ///
    /// The typed core of ``readString``, for the package's decoders.
    package mutating func nextString(_ what: @autoclosure () -> String, limit: Int) throws(CodecError) -> String {
        let start = offset
        let count = try nextCount("the length of \(what())", elementSize: 1, limit: limit)
        let raw = try nextBuffer(count, what()).assumingMemoryBound(to: UInt8.self)
        // ASCII, the usual case, is valid as it is: decoding it repairs nothing, and spares a copy and the generic
        // validation (a text model decodes one string per operation).
        if !raw.contains(where: { $0 >= 0x80 }) { return String(decoding: raw, as: UTF8.self) }
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw CodecError(.invalidValue, "\(what()) is not valid UTF-8", at: start)
        }
        return text
    }
}

// The public entry points throw untyped errors; the package's decoders call the typed cores above (`next…`), so that
// their own typed throws need no translation.
extension BinaryReader {
    /// Reads one byte.
    ///
    /// - Throws: ``CodecError`` `truncated` when the input ends.
    public mutating func readByte(_ what: @autoclosure () -> String) throws -> UInt8 {
        try nextByte(what())
    }

    /// Reads an unsigned varint in its shortest form.
    ///
    /// - Throws: ``CodecError`` `truncated`, `oversized` (more than 64 bits) or `notCanonical` (a padded varint).
    public mutating func readVarint(_ what: @autoclosure () -> String) throws -> UInt64 {
        try nextVarint(what())
    }

    /// Reads a zigzag varint.
    ///
    /// - Throws: ``CodecError``, as ``readVarint(_:)``.
    public mutating func readSigned(_ what: @autoclosure () -> String) throws -> Int64 {
        try nextSigned(what())
    }

    /// Reads a fixed-width big-endian word.
    ///
    /// - Throws: ``CodecError`` `truncated` when the input ends.
    public mutating func readFixed(_ what: @autoclosure () -> String) throws -> UInt64 {
        try nextFixed(what())
    }

    /// Reads exactly `count` raw bytes, returned as a view into the input (valid as long as the input is).
    ///
    /// - Throws: ``CodecError`` `invalidValue` for a negative count, `truncated` when the input ends.
    public mutating func readBuffer(_ count: Int, _ what: @autoclosure () -> String) throws -> UnsafeRawBufferPointer {
        try nextBuffer(count, what())
    }

    /// Reads exactly `count` raw bytes.
    ///
    /// - Throws: ``CodecError``, as ``readBuffer(_:_:)``.
    public mutating func readRaw(_ count: Int, _ what: @autoclosure () -> String) throws -> ArraySlice<UInt8> {
        try nextRaw(count, what())
    }

    /// Reads a count that announces `elementSize`-byte (at least) elements, refusing counts the input or `limit`
    /// cannot hold, so that a hostile count never causes a large allocation.
    ///
    /// The count is compared with what the remaining bytes can hold by division, which cannot overflow whatever the
    /// count and element size.
    ///
    /// - Throws: ``CodecError`` `oversized` when the count is above `limit`, `truncated` when the bytes left cannot
    ///   hold it, or as ``readVarint(_:)``.
    public mutating func readCount(_ what: @autoclosure () -> String, elementSize: Int, limit: Int) throws -> Int {
        try nextCount(what(), elementSize: elementSize, limit: limit)
    }

    /// Reads a length-prefixed byte string of at most `limit` bytes.
    ///
    /// - Throws: ``CodecError``, as ``readCount(_:elementSize:limit:)``.
    public mutating func readLengthPrefixed(_ what: @autoclosure () -> String, limit: Int) throws -> Data {
        try nextLengthPrefixed(what(), limit: limit)
    }

    /// Reads a length-prefixed UTF-8 string of at most `limit` bytes.
    ///
    /// - Throws: ``CodecError`` `invalidValue` when the bytes are not UTF-8, or as
    ///   ``readCount(_:elementSize:limit:)``.
    public mutating func readString(_ what: @autoclosure () -> String, limit: Int) throws -> String {
        try nextString(what(), limit: limit)
    }
}

extension BinaryReader {
    /// What `read` reads from a reader over `bytes`: the bridge over `withUnsafeBytes`, whose closure cannot throw
    /// a typed error, for the package's decoders.
    package static func reading<Value>(
        _ bytes: some ContiguousBytes, _ read: (inout BinaryReader) throws(CodecError) -> Value
    ) throws(CodecError) -> Value {
        let result: Result<Value, CodecError> = bytes.withUnsafeBytes { buffer in
            do throws(CodecError) {
                var reader = BinaryReader(buffer)
                return .success(try read(&reader))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// What `read` reads from `bytes`, which it must read to the end: the value that fills them, `what` ("the
    /// message") in the error when bytes follow it (`trailingBytes`).
    package static func readingWhole<Value>(
        _ bytes: some ContiguousBytes, _ what: String, _ read: (inout BinaryReader) throws(CodecError) -> Value
    ) throws(CodecError) -> Value {
        try reading(bytes) { reader throws(CodecError) in
            let value = try read(&reader)
            guard reader.isAtEnd else {
                throw CodecError(.trailingBytes, "\(reader.remaining) bytes follow \(what)", at: reader.offset)
            }
            return value
        }
    }
}
