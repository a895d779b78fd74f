import FolioCore
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Checkpoints: snapshots of a document at a vector the log has reached.
@Suite struct CheckpointTests {
    let directory: TemporaryDirectory
    let history: SampleHistory
    let clock = Fixtures.clock()
    let store: ChangeLogStore

    init() throws {
        directory = try TemporaryDirectory()
        history = try SampleHistory.make(in: directory)
        store = try directory.openStore(for: .named("Reader"), clock: clock)
        try store.ingest(trusting: history.changes)
        try store.checkInvariants()
    }

    private func snapshot(_ vector: VersionVector) -> Data { Data("state at \(vector)".utf8) }

    @Test func aCheckpointRoundTrips() throws {
        let vector = history["b2"].vector
        clock.advance(byMilliseconds: 5000)
        try store.checkpoints.save(of: history.document, at: vector, contents: snapshot(vector))
        try store.checkInvariants()

        let checkpoint = try #require(try store.checkpoints.latest(of: history.document))
        #expect(checkpoint.document == history.document)
        #expect(checkpoint.vector == vector)
        #expect(checkpoint.contents == snapshot(vector))
        #expect(checkpoint.createdAt == Fixtures.start.advanced(by: 5000))
        #expect(
            try store.checkpoints.blob(ContentHash(hashing: snapshot(vector))) == snapshot(vector),
            "contents are a blob")
        #expect(try store.checkpoints.latest(of: Fixtures.otherDocument) == nil)

        try store.close()
        let reopened = try directory.openStore(for: .named("Reader"))
        #expect(try reopened.checkpoints.latest(of: history.document) == checkpoint)
    }

    @Test func aCheckpointBeyondTheLogIsRefused() throws {
        let beyond = history["c3"].vector.merging(VersionVector.of([(history.b.id, 4)]))
        let error = #expect(throws: StoreError.self) {
            try store.checkpoints.save(of: history.document, at: beyond, contents: snapshot(beyond))
        }
        try store.checkInvariants()
        #expect(error?.code == .checkpoint, "\(String(describing: error))")
        #expect(try store.checkpoints.latest(of: history.document) == nil)
        #expect(try store.checkpoints.blob(ContentHash(hashing: snapshot(beyond))) == nil, "nothing stored")

        let stranger = VersionVector.of([(Device.named("Z").id, 1)])
        #expect(throws: StoreError.self) {
            try store.checkpoints.save(of: history.document, at: stranger, contents: snapshot(stranger))
        }
        try store.checkInvariants()
    }

    @Test func aCheckpointOfAnUnknownDocumentIsRefused() throws {
        let error = #expect(throws: StoreError.self) {
            try store.checkpoints.save(of: Fixtures.unknownDocument, at: VersionVector(), contents: Data())
        }
        try store.checkInvariants()
        #expect(error?.code == .unknownDocument)
    }

    @Test func theLatestCheckpointWithinALimitHasTheMostChangesInsideIt() throws {
        let h = history
        // Checkpoints at a2 (2 changes), b2 (5), a4 (7), c3 (9): b2 and a3 are concurrent with each other.
        for name in ["a2", "b2", "a4", "c3"] {
            clock.advance(byMilliseconds: 1000)
            try store.checkpoints.save(of: h.document, at: h[name].vector, contents: snapshot(h[name].vector))
            try store.checkInvariants()
        }
        func latest(within limit: VersionVector?) throws -> VersionVector? {
            try store.checkpoints.latest(of: h.document, within: limit)?.vector
        }
        #expect(try latest(within: nil) == h["c3"].vector)
        #expect(try latest(within: h["c3"].vector) == h["c3"].vector)
        #expect(try latest(within: h["b3"].vector) == h["b2"].vector, "c3 and a4 are not within b3")
        #expect(try latest(within: h["a3"].vector) == h["a2"].vector, "b2 is not within a3")
        #expect(try latest(within: h["c2"].vector) == nil, "a2 is not within c2")
        #expect(try latest(within: h["b3"].vector.merging(h["a3"].vector)) == h["b2"].vector)
        #expect(try latest(within: h["a4"].vector) == h["a4"].vector)
        let found = try #require(try store.checkpoints.latest(of: h.document, within: h["b3"].vector))
        #expect(found.contents == snapshot(h["b2"].vector))
    }

    @Test func aCheckpointWhoseContentsWereDamagedIsCorrupt() throws {
        let vector = history["a4"].vector
        try store.checkpoints.save(of: history.document, at: vector, contents: snapshot(vector))
        try store.checkInvariants()
        try store.close()
        let damaged = try SQLiteShell.run("UPDATE blob SET bytes = X'00';", on: store.url)
        try #require(damaged.succeeded, "\(damaged.errors)")

        let reopened = try directory.openStore(for: .named("Reader"), checked: false)
        let error = #expect(throws: StoreError.self) { _ = try reopened.checkpoints.latest(of: history.document) }
        #expect(error?.code == .corrupt)
        let verification = try reopened.verify()
        #expect(!verification.isSound)
        #expect(verification.description.hasPrefix("1 problem in 1 document, "), "\(verification)")
    }
}
