import CZlib
import FolioCore
import Foundation

/// How the store keeps bytes at rest: as they are, or deflated (zlib) when that saves at least an eighth.
///
/// Change bodies are kept as their canonical encoding (whose first byte, the format version, is below 0x80) or as
/// `0xC0, varint length, zlib stream`; blobs and local state always start with a marker byte, `0x00` for raw.
/// Hashes are always of the original bytes, so compression is invisible above the store.
enum AtRest {
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
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: header.bytes.count + Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress! + header.bytes.count, &capacity, input.baseAddress, uLong(input.count), 1)
            }
        }
        guard status == Z_OK, Int(capacity) + header.bytes.count <= bytes.count - bytes.count / 8 else { return nil }
        output.replaceSubrange(0..<header.bytes.count, with: header.bytes)
        output.removeLast(output.count - header.bytes.count - Int(capacity))
        return output
    }

    private static func inflated(_ stored: Data) throws(StoreError) -> Data {
        let result: Data? = stored.withUnsafeBytes { buffer in
            var reader = BinaryReader(buffer)
            guard (try? reader.readByte("the marker")) == deflatedMarker,
                let length = try? reader.readVarint("the length"), length <= UInt64(inflatedLimit)
            else { return nil }
            var output = Data(count: Int(length))
            var produced = uLongf(length)
            let status = output.withUnsafeMutableBytes { out in
                uncompress(
                    out.baseAddress!.assumingMemoryBound(to: Bytef.self), &produced,
                    buffer.baseAddress!.assumingMemoryBound(to: Bytef.self) + reader.offset, uLong(reader.remaining))
            }
            return status == Z_OK && produced == uLongf(length) ? output : nil
        }
        guard let result else { throw StoreError(.corrupt, "a compressed value in the store cannot be inflated") }
        return result
    }
}
