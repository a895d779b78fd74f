import FolioCore
import FolioTestWorkPool
import Foundation
import Testing

/// The compact run encoding refuses what hostile bytes say with an error, never a trap.
@Suite(.workPool) struct ChangeRunCodecTests {
    /// A parent whose vector names a later change of the device than the one made on it (here an outside stamp a
    /// reader was handed) predicts a vector that does not name that change: the run does not decode.
    @Test func aParentNamingALaterChangeOfItsDeviceIsRefused() throws {
        var history = HistoryBuilder()
        let first = history.append(device: 0, parents: [])
        let second = history.append(device: 0, parents: [0])
        let document = TestDevices.document
        let bytes = try ChangeRunCodec.encode([second], of: document) { $0 == first.hash ? ChangeStamp(first) : nil }
        let honest = try ChangeRunCodec.decode(bytes, document: document) { $0 == first.id ? ChangeStamp(first) : nil }
        #expect(honest.map(\.hash) == [second.hash])

        var forged = ChangeStamp(first)
        forged.vector = VersionVector([(first.id.device, UInt64(5))])
        var refusal: CodecError?
        do throws(CodecError) {
            _ = try ChangeRunCodec.decode(bytes, document: document) { $0 == first.id ? forged : nil }
        } catch {
            refusal = error
        }
        #expect(refusal?.code == .invalidValue)
        #expect("\(refusal.map { String(describing: $0) } ?? "")".contains("later change of its device"))
    }

    /// An edit made on a merge of its parents keeps its mark through a run (stored as its canonical kind), and an
    /// intent byte beyond the known ones is refused with or without the mark.
    @Test func anEditMadeOnAMergeRoundTripsThroughARun() throws {
        var history = HistoryBuilder()
        let root = history.append(device: 0, parents: [])
        history.append(device: 0, parents: [0])
        history.append(device: 1, parents: [0])
        let operations = Data("insert 'x' at 3".utf8)
        let merge = history.append(
            device: 0, parents: [1, 2], kind: .edit(Edit(operations: operations, isMadeOnMerge: true)))
        let after = history.append(device: 1, parents: [3], kind: .edit(Edit(operations: operations)))
        let document = TestDevices.document
        let run = Array(history.changes.dropFirst())
        let bytes = try ChangeRunCodec.encode(run, of: document) { $0 == root.hash ? ChangeStamp(root) : nil }
        let decoded = try ChangeRunCodec.decode(bytes, document: document) { $0 == root.id ? ChangeStamp(root) : nil }
        #expect(decoded.map(\.hash) == run.map(\.hash))
        #expect(decoded.first { $0.hash == merge.hash }?.kind == merge.kind)
        #expect(decoded.last?.kind == after.kind)
        // Format 2 only for a run that needs it; its forms are refused in a run that says format 1.
        #expect(bytes.first == 2)
        let plain = try ChangeRunCodec.encode([run[0], run[1]], of: document) {
            $0 == root.hash ? ChangeStamp(root) : nil
        }
        #expect(plain.first == 1)
        var downgraded = bytes
        downgraded[0] = 1
        #expect(throws: CodecError.self) {
            try ChangeRunCodec.decode(downgraded, document: document) { $0 == root.id ? ChangeStamp(root) : nil }
        }
        // A run of format 2 without such an edit would have two encodings: refused.
        var upgraded = plain
        upgraded[0] = 2
        #expect(throws: CodecError.self) {
            try ChangeRunCodec.decode(upgraded, document: document) { $0 == root.id ? ChangeStamp(root) : nil }
        }
        // An undo made on a merge (stored as its canonical kind) needs format 2 too.
        var undoing = HistoryBuilder()
        let base = undoing.append(device: 0, parents: [])
        undoing.append(device: 0, parents: [0])
        undoing.append(device: 1, parents: [0])
        undoing.append(
            device: 1, parents: [1, 2],
            kind: .edit(Edit(operations: operations, intent: .undo(of: base.id), isMadeOnMerge: true)))
        let undoRun = Array(undoing.changes.dropFirst())
        let undoBytes = try ChangeRunCodec.encode(undoRun, of: document) { $0 == base.hash ? ChangeStamp(base) : nil }
        #expect(undoBytes.first == 2)
        let undone = try ChangeRunCodec.decode(undoBytes, document: document) {
            $0 == base.id ? ChangeStamp(base) : nil
        }
        #expect(undone.map(\.hash) == undoRun.map(\.hash))

        var encoding = merge.encoded()
        let intent = try #require(encoding.lastIndex(of: 0x80))
        for forged: UInt8 in [0x83, 0x03, 0xC0] {
            encoding[intent] = forged
            #expect(throws: CodecError.self) { try Change(decoding: Data(encoding), document: document) }
        }
    }
}
