import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import GRDB
import Testing

@testable import FolioStore

/// A long history is kept in segments of `FoldPolicy.longHistorySegmentTarget` changes, each with the seqs it holds
/// beside it, so that reading an old stretch of the history (an old version, a change by identity) decodes the
/// segments holding it, each alone, and not every segment before them. Seqs that are missing or wrong only cost the
/// read its shortcut.
@Suite(.workPool) struct SegmentSeqsTests {
    let directory: TemporaryDirectory
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A store whose document has `count` local edits, closed (which folds them).
    private func write(_ name: String, count: Int, batch: Int = 1_000) throws -> [Change] {
        let store = try directory.openStore(name, as: .named("Writer"))
        for start in stride(from: 0, to: count, by: batch) {
            _ = try store.append((start..<min(start + batch, count)).map { Fixtures.edit("e\($0)") }, to: document)
        }
        let all = try store.changes(of: document)
        try store.close()
        return all
    }

    private func segmentCounts(_ name: String) throws -> [Int] {
        try SQLiteShell.run("SELECT count FROM segment ORDER BY id", on: directory.file(name)).output
            .split(separator: "\n").compactMap { Int($0) }
    }

    @Test func readingAnOldStretchOfALongHistoryDecodesOnlyTheSegmentsHoldingIt() throws {
        let all = try write("Long.sqlite", count: 40_000)
        let target = FoldPolicy.standard.longHistorySegmentTarget
        let counts = try segmentCounts("Long.sqlite")
        #expect(counts.count >= 10 && counts.allSatisfy { $0 <= target }, "segments of \(counts) changes")

        let reader = try directory.openStore("Long.sqlite", as: .named("Reader"))
        for (low, high) in [(30_000, 30_900), (39_000, 39_500), (12_000, 12_001), (10, 800), (20_000, 20_001)] {
            let before = reader.segmentsDecoded
            let since = all[low].vector
            let limit = all[high].vector
            #expect(
                try reader.changes(of: document, since: since, within: limit)
                    == all.filter { !since.contains($0.id) && limit.contains($0.id) }, "\(low)...\(high)")
            #expect(
                reader.segmentsDecoded - before <= 2, "\(reader.segmentsDecoded - before) decoded for \(low)...\(high)")
        }
        let before = reader.segmentsDecoded
        #expect(try reader.change(all[25_555].id, of: document) == all[25_555])
        #expect(reader.segmentsDecoded - before <= 1)
        #expect(try reader.changes(of: document) == all)
        #expect(try reader.verify().isSound)
        try reader.close()
    }

    @Test func theFoldThatMakesAHistoryLongWritesItsLargeSegmentAgainInPieces() throws {
        let policy = FoldPolicy.standard
        let short = try write("Growing.sqlite", count: policy.segmentTarget - 3_000, batch: 4_000)
        #expect(try segmentCounts("Growing.sqlite") == [short.count - 1])  // the head stays a row

        let store = try directory.openStore("Growing.sqlite", as: .named("Writer"))
        _ = try store.append((0..<6_000).map { Fixtures.edit("more \($0)") }, to: document)
        let all = try store.changes(of: document)
        try store.close()
        let counts = try segmentCounts("Growing.sqlite")
        #expect(counts.allSatisfy { $0 <= policy.longHistorySegmentTarget }, "segments of \(counts) changes")
        #expect(counts.reduce(0, +) == all.count - 1)

        let reader = try directory.openStore("Growing.sqlite", as: .named("Reader"))
        #expect(try reader.changes(of: document) == all)
        #expect(try reader.verify().isSound)
        try reader.close()
    }

    /// The stored seqs of one device, as `SegmentSeqs` encodes them.
    private func seqs(_ device: DeviceID, _ seqs: ClosedRange<UInt64>) -> Data {
        var writer = BinaryWriter(capacity: 32)
        writer.write(varint: 1)
        writer.write(fixed: device.uuid.high)
        writer.write(fixed: device.uuid.low)
        writer.write(varint: seqs.lowerBound)
        writer.write(varint: seqs.upperBound - seqs.lowerBound)
        return Data(writer.bytes)
    }

    @Test func wrongOrMissingSeqsCostOnlyTheShortcutAndVerifyReportsThem() throws {
        let all = try write("Wrong.sqlite", count: 40_000)
        let url = directory.file("Wrong.sqlite")
        let writer = Device.named("Writer").id
        // The boundary between the third and fourth segments moved by one: the third promises a change it lacks.
        let queue = try DatabaseQueue(path: url.path)
        let ids = try queue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM segment ORDER BY id") }
        let stored = try queue.read { db in
            try [ids[2], ids[3]].map { id in
                try Data.fetchOne(db, sql: "SELECT seqs FROM segment WHERE id = ?", arguments: [id])
            }
        }
        let third = try SegmentSeqs(decoding: try #require(stored[0]))
        let fourth = try SegmentSeqs(decoding: try #require(stored[1]))
        let boundary = try #require(third.seqs(of: writer)).upperBound
        let end = try #require(fourth.seqs(of: writer)).upperBound
        try queue.write { db in
            try db.execute(
                sql: "UPDATE segment SET seqs = ? WHERE id = ?", arguments: [seqs(writer, 1...(boundary + 1)), ids[2]])
            try db.execute(
                sql: "UPDATE segment SET seqs = ? WHERE id = ?",
                arguments: [seqs(writer, (boundary + 2)...end), ids[3]])
        }
        try queue.close()
        func readsBack(_ store: ChangeLogStore) throws {
            let around = try #require(all.firstIndex { $0.id.seq == boundary })
            for (low, high) in [(around - 10, around + 10), (around, around + 1), (100, 20_000), (39_000, 39_500)] {
                let since = all[low].vector
                let limit = all[high].vector
                #expect(
                    try store.changes(of: document, since: since, within: limit)
                        == all.filter { !since.contains($0.id) && limit.contains($0.id) }, "\(low)...\(high)")
            }
            #expect(try store.change(all[around + 1].id, of: document) == all[around + 1])
        }
        var reader = try directory.openStore("Wrong.sqlite", as: .named("Reader"), checked: false)
        try readsBack(reader)
        var report = try reader.verify()
        #expect(report.problems.filter { $0.message.contains("seqs") }.count == 2, "\(report.problems)")
        try reader.close()

        // A segment without seqs: every read by seqs gives way to reading in order.
        try SQLiteShell.run("UPDATE segment SET seqs = NULL WHERE id = \(ids[5])", on: url)
        reader = try directory.openStore("Wrong.sqlite", as: .named("Reader"), checked: false)
        try readsBack(reader)
        report = try reader.verify()
        #expect(report.problems.filter { $0.message.contains("seqs") }.count == 3, "\(report.problems)")
        try reader.close()
    }

    /// Two devices' histories read together: a catch-up needing many segments reads them in order, each once, and a
    /// short stretch decodes only the segments holding it.
    @Test func aReadOfSeveralDevicesDecodesEachSegmentOnce() throws {
        let a = try directory.openStore("A.sqlite", as: .named("A"))
        let b = try directory.openStore("B.sqlite", as: .named("B"))
        for round in 0..<30 {
            let ours = try a.append((0..<1_000).map { Fixtures.edit("a\(round) \($0)") }, to: document)
            try b.ingest(trusting: ours)
            let theirs = try b.append((0..<1_000).map { Fixtures.edit("b\(round) \($0)") }, to: document)
            try a.ingest(trusting: theirs)
        }
        let all = try a.changes(of: document)
        try a.close()
        try b.close()
        let counts = try segmentCounts("A.sqlite")
        #expect(counts.count > SegmentCache.singleLimit, "segments of \(counts) changes")

        let reader = try directory.openStore("A.sqlite", as: .named("Reader"))
        var before = reader.segmentsDecoded
        #expect(try reader.changes(of: document) == all)
        #expect(reader.segmentsDecoded - before <= counts.count)
        before = reader.segmentsDecoded
        let since = all[30_000].vector
        let limit = all[31_000].vector
        #expect(
            try reader.changes(of: document, since: since, within: limit)
                == all.filter { !since.contains($0.id) && limit.contains($0.id) })
        try reader.close()
        // A fresh reader: the stretch alone.
        let fresh = try directory.openStore("A.sqlite", as: .named("Fresh"))
        before = fresh.segmentsDecoded
        #expect(
            try fresh.changes(of: document, since: since, within: limit)
                == all.filter { !since.contains($0.id) && limit.contains($0.id) })
        #expect(fresh.segmentsDecoded - before <= 2, "\(fresh.segmentsDecoded - before) decoded")
        try fresh.close()
    }

    @Test func aStoreFromBeforeSegmentSeqsGainsThemWhenItOpens() throws {
        let all = try write("Older.sqlite", count: 40_000)
        let url = directory.file("Older.sqlite")
        let written = try SQLiteShell.run("SELECT hex(seqs) FROM segment ORDER BY id", on: url).output
        // The segment table as the step before wrote it: no seqs.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE segment_v9 (
                        id INTEGER PRIMARY KEY, count INTEGER NOT NULL, lifecycle BLOB NOT NULL, bytes BLOB NOT NULL);
                    INSERT INTO segment_v9 SELECT id, count, lifecycle, bytes FROM segment;
                    DROP TABLE segment;
                    ALTER TABLE segment_v9 RENAME TO segment;
                    DELETE FROM grdb_migrations WHERE identifier = 'v10 segment seqs';
                    """)
        }
        try queue.close()

        let reader = try directory.openStore("Older.sqlite", as: .named("Reader"))
        #expect(try SQLiteShell.run("SELECT hex(seqs) FROM segment ORDER BY id", on: url).output == written)
        let before = reader.segmentsDecoded
        #expect(try reader.change(all[33_333].id, of: document) == all[33_333])
        #expect(reader.segmentsDecoded - before <= 1)
        #expect(try reader.verify().isSound)
        try reader.close()
    }

    @Test func storedSeqsFromOutsideAreCheckedBeforeTheyAreBelieved() throws {
        let a = DeviceID(UUIDBytes("0f0110d0-5704-4000-8000-00000000000a")!)
        let b = DeviceID(UUIDBytes("0f0110d0-5704-4000-8000-00000000000b")!)
        func bytes(_ body: (inout BinaryWriter) -> Void) -> Data {
            var writer = BinaryWriter(capacity: 64)
            body(&writer)
            return Data(writer.bytes)
        }
        func device(_ id: DeviceID, _ low: UInt64, _ span: UInt64) -> (inout BinaryWriter) -> Void {
            { writer in
                writer.write(fixed: id.uuid.high)
                writer.write(fixed: id.uuid.low)
                writer.write(varint: low)
                writer.write(varint: span)
            }
        }
        let sound = bytes { writer in
            writer.write(varint: 2)
            device(a, 1, 9)(&writer)
            device(b, 5, 0)(&writer)
        }
        let seqs = try SegmentSeqs(decoding: sound)
        #expect(seqs.seqs(of: a) == 1...10)
        #expect(seqs.seqs(of: b) == 5...5)
        #expect(seqs.encoded == sound)

        let refused: [(String, Data)] = [
            ("empty", Data()),
            ("truncated", sound.dropLast()),
            ("trailing", sound + [0]),
            (
                "out of order",
                bytes { writer in
                    writer.write(varint: 2)
                    device(b, 1, 0)(&writer)
                    device(a, 1, 0)(&writer)
                }
            ),
            (
                "repeated",
                bytes { writer in
                    writer.write(varint: 2)
                    device(a, 1, 0)(&writer)
                    device(a, 2, 0)(&writer)
                }
            ),
            (
                "seq 0",
                bytes { writer in
                    writer.write(varint: 1)
                    device(a, 0, 3)(&writer)
                }
            ),
            (
                "beyond the counter",
                bytes { writer in
                    writer.write(varint: 1)
                    device(a, ChangeLimits.counter, 1)(&writer)
                }
            ),
            ("a huge count", bytes { writer in writer.write(varint: UInt64(Int.max)) }),
        ]
        for (name, data) in refused {
            #expect(throws: CodecError.self, "\(name)") { _ = try SegmentSeqs(decoding: Data(data)) }
        }
    }
}
