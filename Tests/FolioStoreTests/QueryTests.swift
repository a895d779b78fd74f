import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Reading the log: vectors, heads, changes by vector and by hash, and documents the store does not know.
@Suite(.workPool) struct QueryTests {
    let directory: TemporaryDirectory
    let history: SampleHistory

    init() throws {
        directory = try TemporaryDirectory()
        history = try SampleHistory.make(in: directory)
    }

    /// A store holding the whole sample history, received in the order it was made.
    private func fullStore() throws -> ChangeLogStore {
        let store = try directory.openStore(for: .named("Reader"))
        let result = try store.ingest(trusting: history.changes)
        try store.checkInvariants()
        #expect(result.applied.count == history.changes.count)
        return store
    }

    @Test func theSampleHistoryHasTheShapeItIsMeantToHave() throws {
        let h = history
        #expect(h.changes.count == 10)
        #expect(h["b1"].parents == [h["a2"].hash])
        #expect(h["c1"].parents == [h["a1"].hash])
        #expect(h["a3"].parents == [h["a2"].hash])
        #expect(h["b2"].parents == [h["b1"].hash, h["c2"].hash].sorted())
        #expect(h["a4"].parents == [h["a3"].hash, h["b2"].hash].sorted())
        #expect(h["c3"].parents == [h["a4"].hash])
        #expect(h["b3"].parents == [h["b2"].hash])
        #expect(h["a3"].vector.compare(to: h["b1"].vector) == .concurrent)
        #expect(h["a3"].vector.compare(to: h["c2"].vector) == .concurrent)
        #expect(h["b3"].vector.compare(to: h["c3"].vector) == .concurrent)
        #expect(h["c3"].vector == VersionVector.of([(h.a.id, 4), (h.b.id, 2), (h.c.id, 3)]))
        #expect(h["c3"].lamport == 6)
        #expect(Causality.isCausalOrder(h.changes))
    }

    @Test func vectorAndHeadsDescribeTheWholeLog() throws {
        let store = try fullStore()
        let h = history
        #expect(try store.vector(of: h.document) == VersionVector.of([(h.a.id, 4), (h.b.id, 3), (h.c.id, 3)]))
        #expect(try store.heads(of: h.document) == Causality.sorted([h["b3"], h["c3"]]))
        #expect(try store.heads(of: h.document).map(\.hash).sorted() == Causality.headHashes(of: h.changes))
        #expect(try store.changeCount() == 10)
        #expect(try store.pendingChanges(of: h.document).isEmpty)
    }

    @Test func changesSinceAVectorAreExactlyTheMissingOnesInCausalOrder() throws {
        let store = try fullStore()
        let h = history
        let all = try store.changes(of: h.document)
        #expect(all.map(\.hash) == h.causalOrder.map(\.hash))
        #expect(Causality.isCausalOrder(all))

        // Every vector a peer could hold: each change's own vector, the empty one, and one beyond the log.
        var vectors = h.changes.map(\.vector) + [VersionVector()]
        vectors.append(VersionVector.of([(h.a.id, 9), (h.c.id, 1)]))
        vectors.append(h["b3"].vector.merging(h["c3"].vector))
        for vector in vectors {
            let missing = try store.changes(of: h.document, since: vector)
            let expected = h.causalOrder.filter { !vector.contains($0.id) }
            #expect(missing.map(\.hash) == expected.map(\.hash), "since \(vector)")
            #expect(Causality.isCausalOrder(missing, after: vector), "since \(vector)")
        }
        #expect(try store.changes(of: h.document, since: store.vector(of: h.document)).isEmpty)
    }

    @Test func looksUpAChangeByItsHash() throws {
        let store = try fullStore()
        for change in history.changes {
            let found = try #require(try store.change(change.hash, of: history.document))
            #expect(found == change)
            #expect(found.id == change.id)
            #expect(found.kind == change.kind)
            #expect(found.parents == change.parents)
            #expect(found.vector == change.vector)
            #expect(found.wallTime == change.wallTime)
        }
        let stranger = ChangeHash(hashing: Array("no such change".utf8))
        #expect(try store.change(stranger, of: history.document) == nil)
        #expect(try store.change(history["a1"].hash, of: Fixtures.otherDocument) == nil)
    }

    @Test func anUnknownDocumentHasNothing() throws {
        let store = try fullStore()
        let unknown = Fixtures.unknownDocument
        #expect(try store.vector(of: unknown) == VersionVector())
        #expect(try store.vector(of: unknown).isEmpty)
        #expect(try store.changes(of: unknown).isEmpty)
        #expect(try store.changes(of: unknown, since: history["c3"].vector).isEmpty)
        #expect(try store.heads(of: unknown).isEmpty)
        #expect(try store.pendingChanges(of: unknown).isEmpty)
        #expect(try store.change(history["a1"].hash, of: unknown) == nil)
        #expect(try store.checkpoints.latest(of: unknown) == nil)
        #expect(try store.syncCursors.vector(SyncCursorKey(peer: "anyone"), of: unknown) == VersionVector())
        #expect(try store.documents() == [history.document])
        try store.checkInvariants()
    }

    @Test func anEmptyStoreHasNothing() throws {
        let store = try directory.openStore(for: .named("Empty"))
        try store.checkInvariants()
        #expect(try store.documents().isEmpty)
        #expect(try store.changeCount() == 0)
        #expect(try store.vector(of: Fixtures.document).isEmpty)
        #expect(try store.heads(of: Fixtures.document).isEmpty)
        let report = try store.verify()
        #expect(report.isSound)
        #expect(report.documents == 0)
        #expect(report.changes == 0)
    }
}
