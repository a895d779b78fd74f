import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Checkpoints: snapshots of a document at a vector the log has reached.
@Suite(.workPool) struct CheckpointTests {
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
            try store.checkpoints.save(
                of: h.document, at: h[name].vector, contents: snapshot(h[name].vector), keepingApart: 0)
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

    // MARK: Packages stored as manifests

    /// A package of a short text and `images` (name to bytes), encoded as a checkpoint holds it.
    private func package(_ images: [String: Data], text: String = "the text") throws -> Data {
        var package = FilePackage()
        try package.setFile(Data(text.utf8), at: PackagePath("text.txt"))
        for (name, bytes) in images { try package.setFile(bytes, at: PackagePath("images/" + name)) }
        return DocumentContents.package(package).encoded()
    }

    private func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    /// The blob rows: how many, and their stored bytes.
    private func blobRows() throws -> (count: Int, bytes: Int) {
        let outcome = try SQLiteShell.run("SELECT count(*), coalesce(sum(length(bytes)), 0) FROM blob;", on: store.url)
        try #require(outcome.succeeded, "\(outcome.errors)")
        let fields = outcome.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|")
        return (Int(fields[0]) ?? -1, Int(fields[1]) ?? -1)
    }

    @Test func aPackageCheckpointStoresEachLargeFileOnce() throws {
        let size = 8 * 1024
        var images = ["a.png": randomBytes(size, seed: 1), "b.png": randomBytes(size, seed: 2)]
        images["c.png"] = randomBytes(size, seed: 3)
        let first = try package(images)
        images["b.png"] = randomBytes(size, seed: 4)
        let second = try package(images)
        try store.checkpoints.save(of: history.document, at: history["a2"].vector, contents: first)
        try store.checkpoints.save(of: history.document, at: history["b2"].vector, contents: second)
        try store.checkInvariants()

        #expect(try store.checkpoints.latest(of: history.document)?.contents == second)
        #expect(try store.checkpoints.latest(of: history.document, within: history["a2"].vector)?.contents == first)
        let blobs = try blobRows()
        #expect(blobs.count == 6, "four distinct images and two manifests, not two whole packages")
        #expect(blobs.bytes < 4 * size + 2_048, "\(blobs.bytes) bytes stored for \(first.count + second.count)")
        #expect(try store.checkpoints.blob(ContentHash(hashing: images["b.png"]!)) == images["b.png"])
        #expect(try store.verify().isSound)

        try store.close()
        let reopened = try directory.openStore(for: .named("Reader"))
        #expect(try reopened.checkpoints.latest(of: history.document)?.contents == second)
    }

    @Test func aPackageOfSmallFilesAndFlatContentsAreStoredWhole() throws {
        let small = try package(["a.png": Data(repeating: 7, count: 100)])
        try store.checkpoints.save(of: history.document, at: history["a2"].vector, contents: small)
        let flat = DocumentContents.data(randomBytes(16 * 1024, seed: 5)).encoded()
        try store.checkpoints.save(of: history.document, at: history["b2"].vector, contents: flat)
        #expect(try store.checkpoints.blob(ContentHash(hashing: small)) == small)
        #expect(try store.checkpoints.blob(ContentHash(hashing: flat)) == flat)
        #expect(try store.checkpoints.latest(of: history.document)?.contents == flat)
        #expect(try blobRows().count == 2)
    }

    @Test(arguments: [
        "UPDATE blob SET bytes = X'00' WHERE length(bytes) > 4000", "DELETE FROM blob WHERE length(bytes) > 4000",
    ])
    func aPackageCheckpointThatLostAFileIsCorrupt(damage: String) throws {
        let contents = try package(["a.png": randomBytes(8 * 1024, seed: 6)])
        try store.checkpoints.save(of: history.document, at: history["a4"].vector, contents: contents)
        try store.close()
        let damaged = try SQLiteShell.run(damage, on: store.url)
        try #require(damaged.succeeded, "\(damaged.errors)")

        let reopened = try directory.openStore(for: .named("Reader"), checked: false)
        let error = #expect(throws: StoreError.self) { _ = try reopened.checkpoints.latest(of: history.document) }
        #expect(error?.code == .corrupt)
        let verification = try reopened.verify()
        #expect(verification.problems.contains { $0.message.contains("stored as a manifest") }, "\(verification)")
    }

    // MARK: Thinning

    @Test func aCheckpointDropsTheOlderOnesOfItsLineItReplacesWithTheirFiles() throws {
        let h = history
        func image(_ seed: UInt64) -> Data { randomBytes(8 * 1024, seed: seed) }
        // a2 (2 changes), b3 (7, on B's branch, which includes a2), a3 (3), a4 (8: it merges a3 and b2, not b3)
        // and c3 (9, after a4), in stretches of 2 changes: a2 and a3 share one, a4 and c3 another.
        let saved: [(String, Data)] = [
            ("a2", try package(["p.png": image(11)], text: "a2")),
            ("b3", try package(["p.png": image(11)], text: "b3")),
            ("a3", try package(["p.png": image(12)], text: "a3")),
            ("a4", try package(["p.png": image(13)], text: "a4")),
            ("c3", try package(["p.png": image(14)], text: "c3")),
        ]
        for (name, contents) in saved {
            try store.checkpoints.save(of: h.document, at: h[name].vector, contents: contents, keepingApart: 2)
            try store.checkInvariants()
        }
        func latest(within name: String) throws -> VersionVector? {
            try store.checkpoints.latest(of: h.document, within: h[name].vector)?.vector
        }
        #expect(try latest(within: "c3") == h["c3"].vector)
        #expect(try latest(within: "a4") == h["a4"].vector, "the newest of c3's line before it stays")
        #expect(try latest(within: "b3") == h["b3"].vector, "b3 is not in c3's past: it stays")
        #expect(try latest(within: "a3") == h["a3"].vector, "a3 is the newest of its stretch")
        #expect(try latest(within: "a2") == nil, "a2 went with a4: a3 is newer in their stretch")
        #expect(try store.checkpoints.latest(of: h.document)?.contents == saved[4].1)
        // The images of b3 (a2's too), a3, a4 and c3, and their four manifests; a2's manifest is gone.
        #expect(try blobRows().count == 8)
        #expect(try store.checkpoints.blob(ContentHash(hashing: image(11))) == image(11), "b3 still names it")
        #expect(try store.verify().isSound)
    }

    /// A document closed every few changes: the checkpoints left are few, and every version has one not far behind.
    @Test func checkpointsOfALongLineStaySpacedAndFew() throws {
        let spacing = 50
        var vectors: [VersionVector] = []
        var saved = 0
        for index in 0..<300 {
            let change = try store.append(Fixtures.edit("edit \(index)"), to: history.document)
            vectors.append(change.vector)
            if index % 10 == 9 {
                try store.checkpoints.save(
                    of: history.document, at: change.vector, contents: Data("at \(index)".utf8), keepingApart: spacing)
                saved += 1
            }
        }
        try store.checkInvariants()
        let rows = try SQLiteShell.run("SELECT count(*) FROM checkpoint;", on: store.url)
        let kept = Int(rows.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        #expect(kept >= 3 && kept <= 300 / spacing + 3, "\(kept) of \(saved) checkpoints kept")
        // From the latest checkpoint in its past, or from the first change when there is none.
        for vector in vectors {
            let found = try store.checkpoints.latest(of: history.document, within: vector)
            let start = found?.vector.changeCount ?? 0
            #expect(
                vector.changeCount - start <= 2 * spacing,
                "the version of \(vector.changeCount) changes replays from \(start)")
        }
        #expect(try blobRows().count == kept)
    }

    @Test func contentsAnotherCheckpointHoldsStayAndZeroKeepsEveryCheckpoint() throws {
        let h = history
        // All in one stretch of 1,000 changes: a4 drops a2, which holds a4's contents too.
        for (name, text) in [("a2", "same"), ("a3", "other"), ("a4", "same")] {
            try store.checkpoints.save(of: h.document, at: h[name].vector, contents: Data(text.utf8))
        }
        #expect(try store.checkpoints.latest(of: h.document, within: h["a2"].vector) == nil)
        #expect(try store.checkpoints.latest(of: h.document, within: h["a3"].vector)?.contents == Data("other".utf8))
        #expect(try blobRows().count == 2, "a2's contents are a4's too: they stay")
        #expect(try store.checkpoints.latest(of: h.document)?.contents == Data("same".utf8))
        try store.checkpoints.save(of: h.document, at: h["c3"].vector, contents: Data("c3".utf8), keepingApart: 0)
        #expect(try store.checkpoints.latest(of: h.document, within: h["a3"].vector) != nil, "0 drops none")
    }
}
