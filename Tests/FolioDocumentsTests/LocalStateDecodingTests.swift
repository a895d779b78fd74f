import FolioCore
import FolioModels
import FolioTestWorkPool
import Foundation
import Testing

@testable import FolioDocuments

/// A document's own bookkeeping in the store (the saved-file record, the undo history) is read back from a file
/// anything may have written: a damaged value reads as none, never traps.
@Suite(.workPool) struct LocalStateDecodingTests {
    func record(size: UInt64) -> Data {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(string: "Documents/Notes.txt")
        writer.write(raw: ContentHash(hashing: Data("x".utf8)).bytes)
        writer.write(varint: size)
        writer.write(signed: 1_767_225_600_000)
        writer.write(raw: [UInt8](repeating: 7, count: 32))
        return Data(writer.bytes)
    }

    @Test func aSavedFileRecordRoundTrips() throws {
        let decoded = try #require(SavedFileRecord(decoding: record(size: 12)))
        #expect(decoded.size == 12)
        #expect(decoded.relativePath == "Documents/Notes.txt")
        #expect(SavedFileRecord(decoding: decoded.encoded()) == decoded)
    }

    /// A size beyond `Int.max` trapped in the conversion to `Int`.
    @Test(arguments: [UInt64.max, UInt64(Int.max) + 1])
    func aSizeNoFileCanHaveReadsAsNoRecord(size: UInt64) {
        #expect(SavedFileRecord(decoding: record(size: size)) == nil)
    }

    @Test func aTruncatedRecordReadsAsNone() {
        let bytes = record(size: 12)
        for length in 0..<bytes.count {
            #expect(SavedFileRecord(decoding: bytes.prefix(length)) == nil)
        }
    }

    @Test func anUndoHistoryWithADamagedStepReadsAsEmpty() {
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(varint: 1)
        writer.write(fixed: 1)
        writer.write(fixed: 2)
        writer.write(varint: 0)  // seq 0 names no change
        writer.write(lengthPrefixed: TextDocument.Operation.encodeGroup([]))
        writer.write(varint: 0)
        let history = UndoHistory<TextDocument.Operation>(decoding: Data(writer.bytes))
        #expect(history == UndoHistory())

        var huge = BinaryWriter()
        huge.write(byte: 1)
        huge.write(varint: 10_000)  // more steps than the bytes can hold
        #expect(UndoHistory<TextDocument.Operation>(decoding: Data(huge.bytes)) == UndoHistory())
    }
}
