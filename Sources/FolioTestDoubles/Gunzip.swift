import CZlib
import Foundation

/// The contents of a gzip file, decompressed in the process by the system's zlib (no `gzip` to run).
public enum Gunzip {
    /// Why the bytes are not one whole gzip stream.
    public struct Failure: Error, CustomStringConvertible {
        /// What was wrong, for a message.
        public var description: String
    }

    /// Decompresses `data`, one gzip stream.
    ///
    /// - Throws: ``Failure`` when it is not gzip, is damaged (zlib's message), or ends early.
    public static func decompress(_ data: Data) throws(Failure) -> Data {
        var stream = z_stream()
        guard folio_inflate_init_gzip(&stream) == Z_OK else { throw Failure(description: "zlib would not start") }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let status = data.withUnsafeBytes { input -> Int32 in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[..<(chunk.count - Int(stream.avail_out))])
                // Z_BUF_ERROR with input left over cannot happen (the chunk was empty); without, the stream ended early.
                guard status == Z_OK else { return status }
            }
        }
        guard status == Z_STREAM_END else {
            let message =
                stream.msg.map { String(cString: $0) } ?? (status == Z_BUF_ERROR ? "it ends early" : "\(status)")
            throw Failure(description: "not a whole gzip stream: \(message)")
        }
        return output
    }
}
