import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Older changes folded into compact segments read back exactly as the rows they replace: by vector, identity and
/// hash, by kind, as heads; `verify` re-hashes them; a damaged segment is found; rows leave the change table only
/// for a segment.
@Suite(.workPool) struct FoldingTests {
    let directory: TemporaryDirectory
    let history: SampleHistory

    init() throws {
        directory = try TemporaryDirectory()
        history = try SampleHistory.make(in: directory)
    }

    /// A store with the sample history and `extra` more local edits, then a lifecycle change and a resolution.
    private func store(_ name: String = "Reader", extra: Int = 40, access: StoreAccess = .shared) throws
        -> ChangeLogStore
    {
        let store = try directory.openStore(name + ".sqlite", as: .named(name), access: access)
        try store.ingest(trusting: history.changes)
        try store.append(.lifecycle(.rename(to: "Renamed")), to: history.document)
        _ = try store.append((0..<extra).map { Fixtures.edit("edit \($0)") }, to: history.document)
        let other = try directory.openStore("Other.sqlite", as: .named("Other"))
        try store.sync(history.document, to: other)
        let theirs = try other.append(Fixtures.edit("theirs"), to: history.document)
        let ours = try store.append(Fixtures.edit("ours"), to: history.document)
        try store.ingest(trusting: [theirs])
        try store.append(
            .resolution(Resolution(strategy: .merge, chosen: [theirs.hash, ours.hash], discarded: [])),
            to: history.document)
        try other.close()
        return store
    }

    private struct Snapshot: Equatable {
        var changes: [Change]
        var heads: [ChangeHash]
        var lifecycle: [ChangeHash]
        var resolutions: [ChangeHash]
        var count: Int
        var vector: VersionVector

        init(_ store: ChangeLogStore, _ document: DocumentID) throws {
            changes = try store.changes(of: document)
            heads = try store.heads(of: document).map(\.hash)
            lifecycle = try store.lifecycleChanges(of: document).map(\.hash)
            resolutions = try store.resolutionChanges(of: document).map(\.hash)
            count = try store.changeCount()
            vector = try store.vector(of: document)
        }
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func foldedChangesReadBackExactly(access: StoreAccess) throws {
        let store = try store(access: access)
        let document = history.document
        let before = try Snapshot(store, document)
        #expect(before.lifecycle.count == 1 && before.resolutions.count == 1)

        #expect(try store.fold(document, keepingNewest: 10) == before.changes.count - 10)
        #expect(try Snapshot(store, document) == before)
        for change in before.changes {
            #expect(try store.change(change.id, of: document) == change)
            #expect(try store.change(change.hash, of: document) == change)
        }
        let middle = before.changes[before.changes.count / 2].vector
        #expect(try store.changes(of: document, since: middle) == before.changes.filter { !middle.contains($0.id) })
        // Between two versions, from segments and rows alike: exactly the changes the later has and the earlier lacks.
        for (low, high) in [
            (0, 5), (3, before.changes.count / 2), (before.changes.count / 3, before.changes.count - 1),
        ] {
            let since = low == 0 ? VersionVector() : before.changes[low].vector
            let limit = before.changes[high].vector
            #expect(
                try store.changes(of: document, since: since, within: limit)
                    == before.changes.filter { !since.contains($0.id) && limit.contains($0.id) })
        }
        #expect(try store.verify().isSound)

        // The rest but the head, into the same segment (it is below the target size), then a reopen.
        #expect(try store.fold(document) == 9)
        #expect(try Snapshot(store, document) == before)
        try store.close()
        let reopened = try directory.openStore("Reader.sqlite", as: .named("Reader"), access: access)
        #expect(try Snapshot(reopened, document) == before)
        #expect(try reopened.verify().isSound)

        // New changes are made on folded ones, and a peer receives them all.
        let next = try reopened.append(Fixtures.edit("after the fold"), to: document)
        #expect(next.parents == before.heads)
        let peer = try directory.openStore("Peer.sqlite", as: .named("Peer"))
        try reopened.sync(document, to: peer)
        #expect(try peer.changes(of: document) == before.changes + [next])
        try reopened.close()
        try peer.close()
        // One segment, rewritten by the second fold; the head and the change made after it stay rows.
        let segments = try SQLiteShell.run("SELECT count(*), sum(count) FROM segment", on: reopened.url)
        #expect(segments.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1|\(before.changes.count - 1)")
    }

    @Test func aDuplicateOfAFoldedChangeIsRecognisedAndAReusedIdentityCaught() throws {
        let store = try store()
        let document = history.document
        try store.fold(document)
        let folded = try #require(try store.changes(of: document).first)
        let result = try store.ingest(trusting: [folded])
        #expect(result.duplicates == 1 && result.applied.isEmpty)
        let impostor = Change(
            document: document, id: folded.id, parents: folded.parents, vector: folded.vector,
            lamport: folded.lamport, wallTime: Timestamp(millisecondsSince1970: 1), kind: Fixtures.edit("impostor"))
        #expect(throws: StoreError.self) { try store.ingest(trusting: [impostor]) }
        try store.close()
    }

    @Test func closingFoldsTheHistoryAndTheFileShrinks() throws {
        let store = try store(extra: 2_000)
        let document = history.document
        let before = try Snapshot(store, document)
        try store.close()
        // Closing leaves one file: no write-ahead log, no shared-memory index.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            .filter { $0.hasPrefix("Reader.sqlite") }.sorted()
        #expect(files == ["Reader.sqlite"])
        let reopened = try directory.openStore("Reader.sqlite", as: .named("Reader"))
        #expect(try Snapshot(reopened, document) == before)
        // Only the head stays a row.
        let rows = try SQLiteShell.run("SELECT count(*) FROM change", on: reopened.url)
        #expect(rows.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        // About 2,000 edits: a few bytes each in a segment, where rows took a couple of hundred.
        let size = try reopened.byteSize()
        #expect(size < 96 * 1024, "the folded store takes \(size) bytes")
        try reopened.close()
    }

    @Test func appendsPastTheThresholdAreFoldedAsTheyGo() throws {
        let store = try directory.openStore("Writer.sqlite", as: .named("Writer"))
        let document = history.document
        for batch in 0..<30 {
            _ = try store.append((0..<100).map { Fixtures.edit("b\(batch) e\($0)") }, to: document)
        }
        let rows = try SQLiteShell.run("SELECT count(*) FROM change", on: store.url)
        let count = Int(rows.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(count >= 0 && count < FoldPolicy.standard.threshold + 100, "\(count) rows stay")
        #expect(try store.changeCount() == 3_000)
        #expect(try store.verify().isSound)
        try store.close()
    }

    /// A store reading old changes decodes its segments only as far as they reach; later reads go on from there, and a
    /// lookup by hash reads them all. Every read equals the whole history's slice.
    @Test func readsOfOldChangesDecodeSegmentsOnlyAsFarAsTheyReach() throws {
        let writer = try directory.openStore("Long.sqlite", as: .named("Long"))
        let document = history.document
        try writer.ingest(trusting: history.changes)
        // 70,000 edits folded as the log grows make many segments (a long history's hold at most 4,096 changes).
        for batch in 0..<70 {
            _ = try writer.append((0..<1_000).map { Fixtures.edit("b\(batch) e\($0)") }, to: document)
        }
        let all = try writer.changes(of: document)
        try writer.close()
        let segments = try SQLiteShell.run("SELECT count(*) FROM segment", on: directory.file("Long.sqlite"))
        #expect((Int(segments.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 2, "\(segments.output)")

        let reader = try directory.openStore("Long.sqlite", as: .named("Long"))
        for (low, high) in [(10, 200), (40_000, 40_100), (0, 50), (66_000, all.count - 1), (100, 50_000)] {
            let since = all[low].vector
            let limit = all[high].vector
            #expect(
                try reader.changes(of: document, since: since, within: limit)
                    == all.filter { !since.contains($0.id) && limit.contains($0.id) }, "\(low)...\(high)")
        }
        #expect(try reader.change(all[52_222].hash, of: document) == all[52_222])
        #expect(try reader.changes(of: document) == all)
        try reader.close()
    }

    /// A fold that takes more rows than a segment holds at once (a bulk ingest) writes them as several segments of
    /// at most `FoldPolicy.segmentTarget` changes, which a reader decodes one at a time, and which read back as the
    /// very changes ingested.
    @Test func aBulkIngestIsFoldedIntoSegmentsOfTheTargetSize() throws {
        let writer = try directory.openStore("Bulk.sqlite", as: .named("Bulk"))
        let document = history.document
        try writer.ingest(trusting: history.changes)
        // More than `segmentTarget` changes: a long history, kept in segments of `longHistorySegmentTarget`.
        let long = FoldPolicy.standard.segmentTarget
        let target = FoldPolicy.standard.longHistorySegmentTarget
        for batch in 0..<((long + 8_000) / 4_000) {
            _ = try writer.append((0..<4_000).map { Fixtures.edit("b\(batch) e\($0)") }, to: document)
        }
        let all = try writer.changes(of: document)
        try writer.close()
        #expect(all.count > long + 1_000)

        let reader = try directory.openStore("Bulk copy.sqlite", as: .named("Bulk copy"))
        try reader.ingest(trusting: all)
        let counts = try SQLiteShell.run("SELECT count FROM segment ORDER BY id", on: reader.url).output
            .split(separator: "\n").compactMap { Int($0) }
        #expect(counts.count >= 2 && counts.allSatisfy { $0 <= target }, "segments of \(counts) changes")
        // Each segment decoded alone, by the stamps it carries.
        var streamed: [Change] = []
        _ = try reader.streamChanges(
            of: document, since: VersionVector(), within: nil, batch: 1_024, cachingSegmentsUpTo: 0
        ) { changes in
            streamed += changes
            return true
        }
        #expect(streamed == all)
        #expect(try reader.verify().isSound)

        // A fold that merges the trailing segments (as closing does) with a long run of new rows splits it too.
        for batch in 0..<((long + 4_000) / 4_000) {
            _ = try reader.append((0..<4_000).map { Fixtures.edit("c\(batch) e\($0)") }, to: document)
        }
        let longer = try reader.changes(of: document)
        try reader.fold(document)
        let after = try SQLiteShell.run("SELECT count FROM segment ORDER BY id", on: reader.url).output
            .split(separator: "\n").compactMap { Int($0) }
        #expect(after.allSatisfy { $0 <= target }, "segments of \(after) changes")
        #expect(after.reduce(0, +) + 1 >= longer.count, "\(after.reduce(0, +)) of \(longer.count) folded")
        #expect(try reader.changes(of: document) == longer)
        #expect(try reader.verify().isSound)
        try reader.close()
    }

    @Test func aDamagedSegmentIsFoundAndNothingReadsAsIfItWereSound() throws {
        let store = try store()
        let document = history.document
        try store.fold(document)
        try store.close()
        let url = directory.file("Reader.sqlite")
        // One byte of the deflated columns, near the end, flipped.
        try SQLiteShell.run(
            "UPDATE segment SET bytes = substr(bytes, 1, length(bytes) - 8) || x'FF' || substr(bytes, length(bytes) - 6)",
            on: url)
        let damaged = try directory.openStore("Reader.sqlite", as: .named("Reader"), checked: false)
        let report = try damaged.verify()
        #expect(!report.isSound)
        #expect(report.problems.contains { $0.message.contains("segment") })
        #expect(throws: StoreError.self) { _ = try damaged.changes(of: document) }
        try damaged.close()
    }

    @Test func aRowLeavesTheChangeTableOnlyForASegment() throws {
        // Fewer rows than closing folds.
        let store = try store(extra: 0)
        let document = history.document
        let first = try #require(try store.changes(of: document).first)
        try store.close()
        let url = directory.file("Reader.sqlite")
        let refused = try SQLiteShell.run("DELETE FROM change WHERE seq = \(first.id.seq)", on: url)
        #expect(!refused.succeeded)
        #expect(refused.errors.contains("append-only"))
    }
}
