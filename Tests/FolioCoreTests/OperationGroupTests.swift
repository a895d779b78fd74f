import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

/// Decoding a group of operations from untrusted bytes (an edit from a peer, an undo history from the store).
@Suite(.workPool) struct OperationGroupTests {
    /// An operation that takes a kilobyte in memory and one byte encoded; the byte 0xFF is refused.
    struct WideOperation: DocumentOperation {
        var first = SIMD64<UInt64>()
        var second = SIMD64<UInt64>()

        init() {}

        func encode(into writer: inout BinaryWriter) {
            writer.write(byte: 0)
        }

        init(from reader: inout BinaryReader) throws {
            let offset = reader.offset
            guard try reader.readByte("an operation") == 0 else {
                throw CodecError(.invalidValue, "not an operation", at: offset)
            }
        }
    }

    /// The process's peak virtual size so far, in bytes (`VmPeak` of /proc/self/status).
    static func peakVirtualSize() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmPeak:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }

    @Test func aGroupRoundTrips() throws {
        let group = [WideOperation(), WideOperation()]
        #expect(try WideOperation.decodeGroup(WideOperation.encodeGroup(group)) == group)
    }

    /// A declared count is bounded by the bytes that follow (an operation takes a byte at least), but reserving
    /// room for that many operations multiplies the input by their size in memory: a megabyte of input declaring
    /// a million operations reserved a gigabyte before the first one failed to decode.
    @Test func aDeclaredCountReservesNoMoreThanTheOperationsRead() throws {
        var writer = BinaryWriter()
        let count = 1 << 20
        writer.write(varint: UInt64(count))
        writer.write(raw: [UInt8](repeating: 0xFF, count: count))
        let input = Data(writer.bytes)
        let before = try Self.peakVirtualSize()
        #expect(throws: CodecError.self) { try WideOperation.decodeGroup(input) }
        let grown = try Self.peakVirtualSize() - before
        #expect(grown < 256 << 20, "decoding one operation reserved \(grown >> 20) MiB")
    }
}
