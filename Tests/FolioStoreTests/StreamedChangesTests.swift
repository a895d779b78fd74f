import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioStore

/// `streamChanges` hands over the changes `changes(of:since:within:)` reads, each once, in causal order, a batch at a
/// time, from segments and rows alike, and stops when asked; a long history's segments are decoded one at a time and
/// none is kept in the segment cache.
@Suite(.workPool) struct StreamedChangesTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    static let seeds: [UInt64] = [1, 2, 3, 4, 5, 6]

    /// Two devices typing into the document, at times concurrently, exchanging what they typed; store A folds its
    /// older changes into segments of their own now and then (a fold while a store is in use), and keeps the newest
    /// as rows. Returns A's store and its whole log.
    private func history(seed: UInt64, access: StoreAccess, folding: Bool = true) throws -> (
        store: ChangeLogStore, log: [Change]
    ) {
        let a = try directory.openStore(for: .named("A"), access: access)
        let b = try directory.openStore(for: .named("B"))
        var random = SplitMix64(seed: seed)
        try a.append(Fixtures.edit("root"), to: Fixtures.document)
        try a.sync(Fixtures.document, to: b)
        for round in 0..<16 {
            try a.append((0..<random.int(in: 1...30)).map { Fixtures.edit("a\(round).\($0)") }, to: Fixtures.document)
            if random.chance(1, in: 2) {
                try b.append(
                    (0..<random.int(in: 1...20)).map { Fixtures.edit("b\(round).\($0)") }, to: Fixtures.document)
            }
            if random.chance(2, in: 3) {
                try b.sync(Fixtures.document, to: a)
                try a.sync(Fixtures.document, to: b)
            }
            if folding, random.chance(2, in: 3) {
                _ = try a.fold(Fixtures.document, keepingNewest: random.int(in: 0...12), minimum: 1, merging: false)
            }
        }
        try b.close()
        return (a, try a.changes(of: Fixtures.document))
    }

    /// Every change streamed, batch after batch, and the size of each batch.
    private func streamed(
        _ store: ChangeLogStore, since: VersionVector, within: VersionVector?, batch: Int, cached: Int
    ) throws -> (changes: [Change], batches: [Int]) {
        var changes: [Change] = []
        var batches: [Int] = []
        let finished = try store.streamChanges(
            of: Fixtures.document, since: since, within: within, batch: batch, cachingSegmentsUpTo: cached
        ) { part in
            #expect(!part.isEmpty)
            changes += part
            batches.append(part.count)
            return true
        }
        #expect(finished)
        return (changes, batches)
    }

    @Test(arguments: seeds)
    func streamsWhatTheLogHoldsInCausalOrder(seed: UInt64) throws {
        let (store, log) = try history(seed: seed, access: seed % 2 == 0 ? .exclusive : .shared)
        defer { try? store.close() }
        let segments = try store.read("counting segments") { db in
            let row = try #require(try store.rowID(of: Fixtures.document, in: db))
            return try store.segments(of: Fixtures.document, documentRow: row, in: db).ids.count
        }
        #expect(segments > 1, "seed \(seed): the history was meant to have several segments")
        var random = SplitMix64(seed: seed ^ 0x5EED)
        var ranges: [(since: VersionVector, within: VersionVector?)] = [(VersionVector(), nil)]
        for _ in 0..<8 {
            let first = random.pick(log).vector
            let second = random.pick(log).vector
            ranges.append((first, nil))
            ranges.append((VersionVector(), first))
            ranges.append((first.intersecting(second), first))
        }
        for (since, within) in ranges {
            let expected = try store.changes(of: Fixtures.document, since: since, within: within)
            for cached in [0, Int.max] {
                let (changes, _) = try streamed(store, since: since, within: within, batch: 7, cached: cached)
                let what =
                    "seed \(seed), since \(since), within \(within.map(\.description) ?? "all"), cached \(cached)"
                #expect(changes.count == expected.count, "\(what)")
                #expect(Set(changes.map(\.hash)) == Set(expected.map(\.hash)), "\(what)")
                #expect(Causality.isCausalOrder(changes, after: since), "\(what): not in causal order")
            }
        }
    }

    /// Rows come `batch` at a time, merged across the devices by lamport timestamp, then identity.
    @Test func rowsComeAFewAtATime() throws {
        let (store, log) = try history(seed: 9, access: .shared, folding: false)
        defer { try? store.close() }
        let (changes, batches) = try streamed(store, since: VersionVector(), within: nil, batch: 7, cached: 0)
        #expect(changes.map(\.hash) == log.map(\.hash))
        #expect(batches.dropLast().allSatisfy { $0 == 7 })
        #expect(batches.count == (log.count + 6) / 7)
    }

    /// A body that returns `false` is handed nothing more.
    @Test func stopsWhenTheBodySaysSo() throws {
        let (store, log) = try history(seed: 7, access: .shared)
        defer { try? store.close() }
        for cached in [0, Int.max] {
            var calls = 0
            let finished = try store.streamChanges(
                of: Fixtures.document, since: VersionVector(), within: nil, batch: 5, cachingSegmentsUpTo: cached
            ) { _ in
                calls += 1
                return false
            }
            #expect(!finished)
            #expect(calls == 1)
        }
        #expect(log.count > 5)
    }

    /// The segments of a long history are decoded one at a time and none stays in the segment cache; a short
    /// history's are read through the cache, as every other read does.
    @Test func keepsNoSegmentOfALongHistory() throws {
        let (store, _) = try history(seed: 8, access: .shared)
        defer { try? store.close() }
        let row = try #require(
            try store.read("finding the document") { db in try store.rowID(of: Fixtures.document, in: db) })
        store.segmentCache.forget(row)
        _ = try streamed(store, since: VersionVector(), within: nil, batch: 64, cached: 0)
        #expect(store.segmentCache.cached(row) == nil)
        _ = try streamed(store, since: VersionVector(), within: nil, batch: 64, cached: Int.max)
        #expect(store.segmentCache.cached(row) != nil)
        // Once the cache holds them, a long history's are read from it.
        let (changes, _) = try streamed(store, since: VersionVector(), within: nil, batch: 64, cached: 0)
        #expect(changes.count == (try store.changes(of: Fixtures.document)).count)
    }

    /// A segment that names changes before it without carrying their stamps (a run written without them) does not
    /// decode alone: from it on, the stream reads the segments after those before it, through the cache, and hands
    /// over the same changes.
    @Test func aSegmentWithoutStampsIsReadAfterTheOnesBeforeIt() throws {
        let (store, log) = try history(seed: 10, access: .shared)
        defer { try? store.close() }
        let row = try #require(
            try store.read("finding the document") { db in try store.rowID(of: Fixtures.document, in: db) })
        let decoded = try store.read("decoding the segments") { db in
            try store.segments(of: Fixtures.document, documentRow: row, in: db)
        }
        try #require(decoded.ids.count > 2)
        let earlier = Array(decoded.changes.prefix(decoded.counts[0]))
        let second = Array(decoded.changes.dropFirst(decoded.counts[0]).prefix(decoded.counts[1]))
        let stamps = Dictionary(earlier.map { ($0.hash, ChangeStamp($0)) }) { first, _ in first }
        let bare = try ChangeRunCodec.encode(second, of: Fixtures.document, embeddingOutside: false) { stamps[$0] }
        try #require(throws: CodecError.self) {
            try ChangeRunCodec.decode(bare, document: Fixtures.document) { _ in nil }
        }
        try store.write("writing a segment without stamps") { db in
            try db.execute(sql: "UPDATE segment SET bytes = ? WHERE id = ?", arguments: [Data(bare), decoded.ids[1]])
        }
        store.segmentCache.forget(row)
        let (changes, _) = try streamed(store, since: VersionVector(), within: nil, batch: 64, cached: 0)
        #expect(Set(changes.map(\.hash)) == Set(log.map(\.hash)))
        #expect(changes.count == log.count)
        #expect(Causality.isCausalOrder(changes))
    }

    /// A device's folded mark past what its segments hold (damage): the changes between are in no segment and no row
    /// the stream reads, and the stream says so, through the cache or not, rather than leaving them out.
    @Test(arguments: [0, Int.max])
    func segmentsThatLackChangesTheyFoldAreCorrupt(cached: Int) throws {
        let (store, _) = try history(seed: 11, access: .shared)
        defer { try? store.close() }
        let row = try #require(
            try store.read("finding the document") { db in try store.rowID(of: Fixtures.document, in: db) })
        try store.write("marking more changes folded than the segments hold") { db in
            try db.execute(
                sql: """
                    UPDATE frontier SET folded = folded + 2 WHERE document = ? AND folded > 0 AND folded + 2 <= seq
                    """, arguments: [row])
            #expect(db.changesCount > 0)
        }
        store.segmentCache.forget(row)
        let error = #expect(throws: StoreError.self) {
            try store.streamChanges(
                of: Fixtures.document, since: VersionVector(), within: nil, batch: 64, cachingSegmentsUpTo: cached
            ) { _ in true }
        }
        #expect(error?.code == .corrupt)
    }

    /// A document the store does not know streams nothing.
    @Test func anUnknownDocumentStreamsNothing() throws {
        let store = try directory.openStore(for: .named("A"))
        defer { try? store.close() }
        var calls = 0
        let finished = try store.streamChanges(of: Fixtures.unknownDocument, since: VersionVector(), within: nil) { _ in
            calls += 1
            return true
        }
        #expect(finished)
        #expect(calls == 0)
    }
}
