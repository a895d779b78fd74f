import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

@Suite(.workPool) struct BinaryCodingTests {
    private func read<T>(_ bytes: [UInt8], _ body: (inout BinaryReader) throws -> T) throws -> (T, BinaryReader) {
        try bytes.withUnsafeBytes { buffer in
            var reader = BinaryReader(buffer)
            let value = try body(&reader)
            return (value, reader)
        }
    }

    /// The ``CodecError`` that `body` throws, or `nil`; an error of another type is recorded as an issue.
    private func readError(_ bytes: [UInt8], _ body: (inout BinaryReader) throws -> Void) -> CodecError? {
        do {
            _ = try read(bytes, body)
            return nil
        } catch let error as CodecError {
            return error
        } catch {
            Issue.record("threw \(error), not CodecError")
            return nil
        }
    }

    struct VarintCase: Sendable, CustomTestStringConvertible {
        var value: UInt64
        var bytes: [UInt8]
        var testDescription: String { "\(value)" }
    }

    @Test(arguments: [
        VarintCase(value: 0, bytes: [0x00]),
        VarintCase(value: 1, bytes: [0x01]),
        VarintCase(value: 127, bytes: [0x7F]),
        VarintCase(value: 128, bytes: [0x80, 0x01]),
        VarintCase(value: 300, bytes: [0xAC, 0x02]),
        VarintCase(value: 16_383, bytes: [0xFF, 0x7F]),
        VarintCase(value: 16_384, bytes: [0x80, 0x80, 0x01]),
        VarintCase(value: 1 << 63, bytes: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
        VarintCase(value: .max, bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
    ])
    func varintsAreShortestLEB128(_ example: VarintCase) throws {
        var writer = BinaryWriter()
        writer.write(varint: example.value)
        #expect(writer.bytes == example.bytes)
        let (value, reader) = try read(example.bytes) { (reader: inout BinaryReader) throws in
            try reader.readVarint("a value")
        }
        #expect(value == example.value)
        #expect(reader.isAtEnd)
    }

    @Test(arguments: [
        (Int64(0), UInt64(0)), (-1, 1), (1, 2), (-2, 3), (2, 4), (-64, 127), (64, 128),
        (.max, .max - 1), (.min, .max),
    ])
    func signedValuesUseZigzag(value: Int64, zigzag: UInt64) throws {
        var signed = BinaryWriter()
        signed.write(signed: value)
        var unsigned = BinaryWriter()
        unsigned.write(varint: zigzag)
        #expect(signed.bytes == unsigned.bytes)
        let (decoded, _) = try read(signed.bytes) { (reader: inout BinaryReader) throws in
            try reader.readSigned("a value")
        }
        #expect(decoded == value)
    }

    @Test func fixedWordsAndStringsRoundTrip() throws {
        var writer = BinaryWriter()
        writer.write(fixed: 0x0102_0304_0506_0708)
        writer.write(string: "Grüße")
        writer.write(lengthPrefixed: [UInt8]([9, 8, 7]))
        writer.write(byte: 0xAB)
        #expect(writer.bytes.prefix(8) == [1, 2, 3, 4, 5, 6, 7, 8])
        let (values, reader) = try read(writer.bytes) { (reader: inout BinaryReader) throws in
            (
                try reader.readFixed("a word"), try reader.readString("a name", limit: 100),
                try reader.readLengthPrefixed("a blob", limit: 3), try reader.readByte("a byte")
            )
        }
        #expect(values.0 == 0x0102_0304_0506_0708)
        #expect(values.1 == "Grüße")
        #expect(values.2 == Data([9, 8, 7]))
        #expect(values.3 == 0xAB)
        #expect(reader.isAtEnd && reader.remaining == 0)
    }

    @Test func readsFailWithTypedErrorsInsteadOfTrapping() {
        #expect(
            readError([]) { (reader: inout BinaryReader) throws in _ = try reader.readByte("x") }?.code == .truncated)
        #expect(
            readError([0x80]) { (reader: inout BinaryReader) throws in _ = try reader.readVarint("x") }?.code
                == .truncated)
        #expect(
            readError([1, 2, 3]) { (reader: inout BinaryReader) throws in _ = try reader.readFixed("x") }?.code
                == .truncated)
        #expect(
            readError([5, 1]) { (reader: inout BinaryReader) throws in _ = try reader.readRaw(5, "x") }?.code
                == .truncated)
        #expect(
            readError([0x80, 0x00]) { (reader: inout BinaryReader) throws in _ = try reader.readVarint("x") }?.code
                == .notCanonical)
        #expect(
            readError([UInt8](repeating: 0xFF, count: 9) + [0x02]) { (reader: inout BinaryReader) throws in
                _ = try reader.readVarint("x")
            }?.code == .oversized)
        #expect(
            readError([UInt8](repeating: 0x80, count: 20)) { (reader: inout BinaryReader) throws in
                _ = try reader.readVarint("x")
            }?.code == .oversized)
        #expect(
            readError([4, 1, 2, 3, 4]) { (reader: inout BinaryReader) throws in
                _ = try reader.readLengthPrefixed("x", limit: 3)
            }?.code == .oversized)
        #expect(
            readError([3, 1, 2, 3]) { (reader: inout BinaryReader) throws in
                _ = try reader.readCount("x", elementSize: 2, limit: 100)
            }?.code == .truncated)
        #expect(
            readError([2, 0xC3, 0x28]) { (reader: inout BinaryReader) throws in
                _ = try reader.readString("x", limit: 10)
            }?.code == .invalidValue)
    }

    @Test func errorsNameWhatAndWhere() throws {
        let error = try #require(
            readError([7, 0x61, 0x62]) { (reader: inout BinaryReader) throws in
                _ = try reader.readString("the document's name", limit: 100)
            })
        // The length announces 7 bytes but 2 follow: reported where the length starts.
        #expect(error.code == .truncated)
        #expect(error.message.contains("the length of the document's name"))
        #expect(error.offset == 0)
        #expect(error.description == "\(error.message) (at byte 0)")
    }

    @Test func aCountWithinTheInputIsAccepted() throws {
        let (count, reader) = try read([3, 1, 2, 3, 4, 5, 6]) { (reader: inout BinaryReader) throws in
            try reader.readCount("pairs", elementSize: 2, limit: 3)
        }
        #expect(count == 3)
        #expect(reader.offset == 1)
        #expect(reader.remaining == 6)
    }

    /// A count times a large element size must not overflow (it trapped), and a negative length must not reach a
    /// range (it trapped): both are refused with typed errors.
    @Test func hugeCountsAndNegativeLengthsAreRefused() throws {
        // 3 elements of Int.max bytes: the product does not fit in 64 bits.
        let huge = readError([3, 0]) { (reader: inout BinaryReader) throws in
            _ = try reader.readCount("x", elementSize: Int.max, limit: Int.max)
        }
        #expect(huge?.code == .truncated)
        let max = readError([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) {
            (reader: inout BinaryReader) throws in
            _ = try reader.readCount("x", elementSize: 1 << 20, limit: Int.max)
        }
        #expect(max?.code == .truncated)
        let negative = readError([1, 2, 3]) { (reader: inout BinaryReader) throws in
            _ = try reader.readBuffer(-1, "x")
        }
        #expect(negative?.code == .invalidValue)
        #expect(
            readError([1, 2, 3]) { (reader: inout BinaryReader) throws in
                _ = try reader.readRaw(-2, "x")
            }?.code == .invalidValue)
    }
}
