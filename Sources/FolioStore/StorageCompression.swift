import CZlib
import FolioCore
import Foundation
import Synchronization

/// How the store keeps bytes at rest: as they are, or deflated (zlib) when that saves at least an eighth.
///
/// Change bodies are kept as their canonical encoding (whose first byte, the format version, is below 0x80) or as
/// `0xC0, varint length, zlib stream`; blobs and local state always start with a marker byte, `0x00` for raw.
/// Hashes are always of the original bytes, so compression is invisible above the store.
enum StorageCompression {
    static let deflatedMarker: UInt8 = 0xC0
    static let rawMarker: UInt8 = 0x00
    /// Smaller values are never worth a compression attempt: a typical change (identities, hashes, a vector) is a
    /// few hundred bytes that barely compress, and deflating it would cost more than storing it.
    static let threshold = 1024
    /// The largest value the store inflates (a guard against hostile lengths).
    static let inflatedLimit = 1 << 30

    /// A change body as stored.
    static func packBody(_ body: [UInt8]) -> [UInt8] {
        deflated(body) ?? body
    }

    /// A blob or local-state value as stored.
    static func packValue(_ value: Data) -> Data {
        if let packed = deflated(Array(value)) { return Data(packed) }
        var raw = Data([rawMarker])
        raw.append(value)
        return raw
    }

    /// The canonical encoding of a stored change body.
    static func unpackBody(_ stored: Data) throws(StoreError) -> Data {
        guard stored.first == deflatedMarker else { return stored }
        return try inflated(stored)
    }

    /// A stored blob or local-state value.
    static func unpackValue(_ stored: Data) throws(StoreError) -> Data {
        switch stored.first {
        case rawMarker: return stored.dropFirst()
        case deflatedMarker: return try inflated(stored)
        default: throw StoreError(.corrupt, "a stored value has an unknown marker")
        }
    }

    private static func deflated(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= threshold else { return nil }
        var header = BinaryWriter(capacity: 12)
        header.write(byte: deflatedMarker)
        header.write(varint: UInt64(bytes.count))
        let stream = bytes.count >= splitThreshold ? zlibStreamInHalves(bytes) : zlibStream(bytes)
        guard let stream, stream.count + header.bytes.count <= bytes.count - bytes.count / 8 else { return nil }
        return header.bytes + stream
    }

    /// Values at least this large are deflated in two halves at once (see ``zlibStreamInHalves(_:)``).
    static let splitThreshold = 32 * 1024

    /// `bytes` as one zlib stream, at level 1.
    private static func zlibStream(_ bytes: [UInt8]) -> [UInt8]? {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress!, &capacity, input.baseAddress, uLong(input.count), 1)
            }
        }
        guard status == Z_OK else { return nil }
        output.removeLast(output.count - Int(capacity))
        return output
    }

    /// `bytes` as one zlib stream, at level 1, its two halves deflated on two threads (as pigz does).
    ///
    /// The first half ends with a sync flush (byte-aligned, not final); the second is primed with the 32 KiB before
    /// it, so it compresses as well as a single pass would, and ends the stream. Behind the standard header and
    /// before the Adler-32 of the whole, the result is an ordinary zlib stream: `uncompress` reads it as any other.
    /// Large values (a merge's contents, a long group of edits) are written while a person waits for them.
    private static func zlibStreamInHalves(_ bytes: [UInt8]) -> [UInt8]? {
        let middle = bytes.count / 2
        let window = 32 * 1024
        let halves = Mutex<[[UInt8]?]>([nil, nil])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let range = half == 0 ? 0..<middle : middle..<bytes.count
            let dictionary = half == 0 ? 0..<0 : max(0, middle - window)..<middle
            let deflated = bytes.withUnsafeBufferPointer { input in
                rawDeflate(
                    UnsafeBufferPointer(rebasing: input[range]),
                    dictionary: UnsafeBufferPointer(rebasing: input[dictionary]),
                    finish: half == 1)
            }
            halves.withLock { $0[half] = deflated }
        }
        let (first, second) = halves.withLock { ($0[0], $0[1]) }
        guard let first, let second else { return nil }
        let adler = bytes.withUnsafeBufferPointer { adler32(adler32(0, nil, 0), $0.baseAddress, uInt($0.count)) }
        // 0x78 0x01: deflate with a 32 KiB window, level 1 (what compress2 writes at that level).
        var stream: [UInt8] = [0x78, 0x01]
        stream.reserveCapacity(2 + first.count + second.count + 4)
        stream += first
        stream += second
        stream += [
            UInt8(truncatingIfNeeded: adler >> 24), UInt8(truncatingIfNeeded: adler >> 16),
            UInt8(truncatingIfNeeded: adler >> 8), UInt8(truncatingIfNeeded: adler),
        ]
        return stream
    }

    /// A raw deflate of `input` at level 1, primed with `dictionary`; ended with a sync flush, or as the last block
    /// of a stream when `finish`.
    private static func rawDeflate(
        _ input: UnsafeBufferPointer<UInt8>, dictionary: UnsafeBufferPointer<UInt8>, finish: Bool
    ) -> [UInt8]? {
        var stream = z_stream()
        guard folio_deflate_init_raw(&stream, 1) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        if !dictionary.isEmpty, deflateSetDictionary(&stream, dictionary.baseAddress, uInt(dictionary.count)) != Z_OK {
            return nil
        }
        // Room for the bound plus the flush's empty stored block.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
        let status = output.withUnsafeMutableBufferPointer { out in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            stream.next_out = out.baseAddress
            stream.avail_out = uInt(out.count)
            return deflate(&stream, finish ? Z_FINISH : Z_SYNC_FLUSH)
        }
        guard status == (finish ? Z_STREAM_END : Z_OK), stream.avail_in == 0, stream.avail_out > 0 else { return nil }
        output.removeLast(Int(stream.avail_out))
        return output
    }

    /// Deflate expands its input at most 1032 times (a 258-byte match in two bits), so a stream of `n` bytes never
    /// inflates to more than `1032 n`.
    static let maximumInflation = 1032

    /// Inflates a stored value, allocating for its declared length only once that length is one the stream can
    /// hold and within ``inflatedLimit``: a few hostile bytes cannot make the store allocate a gigabyte.
    private static func inflated(_ stored: Data) throws(StoreError) -> Data {
        let result: Result<Data, StoreError> = stored.withUnsafeBytes { buffer in
            var reader = BinaryReader(buffer)
            guard (try? reader.nextByte("the marker")) == deflatedMarker,
                let length = try? reader.nextVarint("the length")
            else {
                return .failure(StoreError(.corrupt, "a compressed value in the store has a damaged header"))
            }
            // Only values of `threshold` bytes or more are ever deflated; an empty one would also leave no buffer.
            guard length > 0 else {
                return .failure(
                    StoreError(
                        .corrupt, "a compressed value in the store declares 0 bytes, which no compressed value has"))
            }
            let streamBytes = UInt64(reader.remaining)
            guard length <= UInt64(inflatedLimit), length <= streamBytes * UInt64(maximumInflation) else {
                return .failure(
                    StoreError(
                        .corrupt,
                        "a compressed value in the store declares \(length) bytes, more than its \(streamBytes) bytes of stream can hold (at most \(min(UInt64(inflatedLimit), streamBytes * UInt64(maximumInflation))))"
                    ))
            }
            var output = Data(count: Int(length))
            var produced = uLongf(length)
            let status = output.withUnsafeMutableBytes { out in
                uncompress(
                    out.baseAddress!.assumingMemoryBound(to: Bytef.self), &produced,
                    buffer.baseAddress!.assumingMemoryBound(to: Bytef.self) + reader.offset, uLong(reader.remaining))
            }
            guard status == Z_OK && produced == uLongf(length) else {
                return .failure(StoreError(.corrupt, "a compressed value in the store cannot be inflated"))
            }
            return .success(output)
        }
        return try result.get()
    }
}
