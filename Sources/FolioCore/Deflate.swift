import CZlib

/// zlib streams for the compact encodings (see ``ChangeRunCodec``): written once at the best compression, read with
/// the length they declare checked before anything is allocated.
package enum Deflate {
    /// Deflate expands its input at most 1032 times (a 258-byte match in two bits), so a stream of `n` bytes never
    /// inflates to more than `1032 n`.
    package static let maximumInflation = 1032

    /// `bytes` as one zlib stream at level 9.
    package static func compressed(_ bytes: [UInt8]) -> [UInt8] {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress!, &capacity, input.baseAddress, uLong(input.count), 9)
            }
        }
        // compress2 fails only without memory or with a buffer below compressBound, neither of which can happen.
        precondition(status == Z_OK, "zlib could not compress \(bytes.count) bytes (status \(status))")
        output.removeLast(output.count - Int(capacity))
        return output
    }

    /// The `length` bytes `stream` holds, or `nil` when it is not a zlib stream of exactly that many bytes or
    /// `length` is more than it could hold.
    package static func inflated(_ stream: UnsafeRawBufferPointer, length: Int) -> [UInt8]? {
        guard length > 0, UInt64(length) <= UInt64(stream.count) * UInt64(maximumInflation) else { return nil }
        var output = [UInt8](repeating: 0, count: length)
        var produced = uLongf(length)
        let status = output.withUnsafeMutableBufferPointer { out in
            uncompress(
                out.baseAddress!, &produced, stream.baseAddress?.assumingMemoryBound(to: Bytef.self),
                uLong(stream.count))
        }
        guard status == Z_OK, produced == uLongf(length) else { return nil }
        return output
    }
}
