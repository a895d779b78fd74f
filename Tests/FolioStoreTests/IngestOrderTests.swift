import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A fresh store that receives a history in any order, in any batches, with duplicates, ends up with the same log,
/// with either access (an exclusive store keeps its frontiers in memory, which `checkInvariants` compares with the
/// file after every call).
@Suite(.workPool) struct IngestOrderTests {
    let directory: TemporaryDirectory
    let history: SampleHistory

    init() throws {
        directory = try TemporaryDirectory()
        history = try SampleHistory.make(in: directory)
    }

    /// What every store that received `changes` must hold, from a store that received them in the order made.
    private struct Expected {
        var vector: VersionVector
        var heads: [ChangeHash]
        var log: [ChangeHash]
    }

    private func expected(for changes: [Change]) throws -> Expected {
        let store = try directory.openStore("reference.sqlite", as: .named("Reference"))
        defer { try? store.close() }
        try store.ingest(trusting: Causality.sorted(changes))
        try store.checkInvariants()
        let expected = Expected(
            vector: try store.vector(of: history.document), heads: try store.heads(of: history.document).map(\.hash),
            log: try store.changes(of: history.document).map(\.hash))
        // The reference itself must agree with the history computed independently of the store.
        #expect(expected.vector == Causality.vector(of: changes))
        #expect(expected.heads.sorted() == Causality.headHashes(of: changes))
        #expect(expected.log == Causality.sorted(changes).map(\.hash))
        return expected
    }

    /// Delivers `batches` to a fresh store, checking after each call what was applied and what waits, then checks
    /// the final contents against `expected`.
    private func deliver(
        _ batches: [[Change]], expecting expected: Expected, access: StoreAccess = .shared, context: String
    ) throws {
        let name = "receiver.sqlite"
        directory.removeStore(name)
        // A copy of a store that was just created and closed is a fresh store, and much cheaper to make than one.
        try makeEmptyStoreTemplate()
        for suffix in ["", "-wal"]
        where FileManager.default.fileExists(atPath: directory.file(Self.template + suffix).path) {
            try FileManager.default.copyItem(
                at: directory.file(Self.template + suffix), to: directory.file(name + suffix))
        }
        let store = try directory.openStore(name, as: .named("Receiver"), access: access)
        #expect(try store.changeCount() == 0)
        defer {
            try? store.close()
            directory.removeStore(name)
        }
        let document = history.document
        var model = DeliveryModel()
        var sawPending = false
        for (step, batch) in batches.enumerated() {
            let wasDelivered = model.delivered
            let vectorBefore = model.vector
            let newlyApplied = model.deliver(batch)
            let result = try store.ingest(trusting: batch)
            try store.checkInvariants()

            let place = "\(context), step \(step)"
            let appliedHashes = result.applied.map(hash(of:))
            #expect(Set(appliedHashes) == newlyApplied, "applied: \(place)")
            #expect(appliedHashes.count == newlyApplied.count, "applied twice: \(place)")
            let appliedChanges = appliedHashes.compactMap { hash in history.changes.first { $0.hash == hash } }
            #expect(
                Causality.isCausalOrder(appliedChanges, after: vectorBefore), "applied out of causal order: \(place)")
            let pending = try store.pendingChanges(of: document)
            #expect(Set(pending.map(\.hash)) == model.pending, "pending: \(place)")
            #expect(try store.vector(of: document) == model.vector, "vector: \(place)")
            if !pending.isEmpty { sawPending = true }
            if batch.count == 1 {
                let isRepeat = wasDelivered.contains(batch[0].hash)
                #expect(result.duplicates == (isRepeat ? 1 : 0), "duplicates: \(place)")
                #expect(
                    result.deferred == (!isRepeat && model.pending.contains(batch[0].hash) ? 1 : 0),
                    "deferred: \(place)")
            }
        }
        #expect(try store.vector(of: document) == expected.vector, "final vector: \(context)")
        #expect(try store.heads(of: document).map(\.hash) == expected.heads, "final heads: \(context)")
        #expect(try store.changes(of: document).map(\.hash) == expected.log, "final log: \(context)")
        #expect(try store.pendingChanges(of: document).isEmpty, "pending left: \(context)")
        #expect(try store.changeCount() == expected.log.count, "count: \(context)")
        #expect(try store.documents() == [document], "documents: \(context)")
        #expect(try store.summaries().map(\.heads) == [expected.heads], "summary: \(context)")
        // A delivery that started with something other than the very first change must have made some change wait.
        let delivered = batches.joined().map(\.hash)
        if let first = delivered.first, first != expected.log.first, batches.first?.count == 1 {
            #expect(sawPending, "an early change should have waited: \(context)")
        }
    }

    private static let template = "empty-template.sqlite"

    private func makeEmptyStoreTemplate() throws {
        guard !FileManager.default.fileExists(atPath: directory.file(Self.template).path) else { return }
        let store = try directory.openStore(Self.template, as: .named("Receiver"))
        try store.checkInvariants()
        try store.close()
    }

    private func hash(of id: ChangeID) -> ChangeHash {
        history.changes.first { $0.id == id }!.hash
    }

    /// Every one of the 120 orders of a causally closed five-change part of the history, one change per call.
    @Test func everyDeliveryOrderOfFiveChangesGivesTheSameLog() throws {
        // b1, c1 and a3 are pairwise concurrent; b1 and a3 both follow a2.
        let changes = ["a1", "a2", "b1", "c1", "a3"].map { history[$0] }
        #expect(history["b1"].vector.compare(to: history["c1"].vector) == .concurrent)
        let expected = try expected(for: changes)
        #expect(expected.heads.count == 3)
        let orders = permutations(of: Array(changes.indices))
        #expect(orders.count == 120)
        for order in orders {
            try deliver(order.map { [changes[$0]] }, expecting: expected, context: "order \(order)")
        }
    }

    /// Seeded random orders of the whole ten-change history, one change per call.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func randomDeliveryOrdersOfTheWholeHistoryGiveTheSameLog(access: StoreAccess) throws {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let changes = history.changes
        let expected = try expected(for: changes)
        for run in 0..<200 {
            let order = Array(changes.indices).shuffled(using: &generator)
            try deliver(
                order.map { [changes[$0]] }, expecting: expected, access: access,
                context: "seed \(seed) run \(run) order \(order)")
        }
    }

    /// Each change delivered twice, in random order and random batches (a batch may hold both copies).
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func duplicatedDeliveriesInRandomBatchesGiveTheSameLog(access: StoreAccess) throws {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let changes = history.changes
        let expected = try expected(for: changes)
        for run in 0..<100 {
            let twice = (changes + changes).shuffled(using: &generator)
            let batches = randomBatches(twice, sizes: 1...4, using: &generator)
            let shape = batches.map { batch in batch.map { change in history.named.first { $0.value == change }!.key } }
            try deliver(
                batches, expecting: expected, access: access, context: "seed \(seed) run \(run) batches \(shape)")
        }
    }

    @Test func theWholeHistoryTwiceInOneBatchIsAppliedOnce() throws {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let changes = history.changes
        let expected = try expected(for: changes)
        let store = try directory.openStore(for: .named("Receiver"))
        let result = try store.ingest(trusting: (changes + changes).shuffled(using: &generator))
        try store.checkInvariants()
        #expect(result.applied.count == 10, "seed \(seed)")
        #expect(Set(result.applied) == Set(changes.map(\.id)), "seed \(seed)")
        #expect(result.duplicates == 10, "seed \(seed)")
        #expect(try store.changes(of: history.document).map(\.hash) == expected.log, "seed \(seed)")

        let again = try store.ingest(trusting: changes)
        try store.checkInvariants()
        #expect(again.applied.isEmpty)
        #expect(again.duplicates == 10)
        #expect(again.deferred == 0)
        #expect(try store.changes(of: history.document).map(\.hash) == expected.log)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anEarlyChangeWaitsUntilItsDependenciesArrive(access: StoreAccess) throws {
        let h = history
        let store = try directory.openStore(for: .named("Receiver"), access: access)

        // b2 needs a1, a2, b1, c1 and c2.
        var result = try store.ingest(trusting: [h["b2"]])
        try store.checkInvariants()
        #expect(result.applied.isEmpty)
        #expect(result.deferred == 1)
        #expect(try store.pendingChanges(of: h.document) == [h["b2"]])
        #expect(try store.vector(of: h.document).isEmpty)
        #expect(try store.change(h["b2"].hash, of: h.document) == nil, "a waiting change is not in the log")
        #expect(try store.documents() == [h.document], "a document whose only change waits has a log")
        #expect(try store.summaries().map(\.vector) == [VersionVector()])
        #expect(try store.changeCount() == 0)

        result = try store.ingest(trusting: [h["c2"], h["b1"]])
        try store.checkInvariants()
        #expect(result.applied.isEmpty)
        #expect(result.deferred == 2)
        #expect(Set(try store.pendingChanges(of: h.document)) == [h["b2"], h["c2"], h["b1"]])

        result = try store.ingest(trusting: [h["a1"], h["a2"]])
        try store.checkInvariants()
        #expect(result.applied == [h["a1"].id, h["a2"].id, h["b1"].id], "b1 became ready; c2 still lacks c1")
        #expect(Set(try store.pendingChanges(of: h.document)) == [h["b2"], h["c2"]])

        // Sending a waiting change again changes nothing.
        result = try store.ingest(trusting: [h["b2"]])
        try store.checkInvariants()
        #expect(result.duplicates == 1)
        #expect(result.deferred == 0)
        #expect(Set(try store.pendingChanges(of: h.document)) == [h["b2"], h["c2"]])

        result = try store.ingest(trusting: [h["c1"]])
        try store.checkInvariants()
        #expect(result.applied == [h["c1"].id, h["c2"].id, h["b2"].id])
        #expect(result.deferred == 0)
        #expect(try store.pendingChanges(of: h.document).isEmpty)
        #expect(try store.vector(of: h.document) == h["b2"].vector)
        #expect(try store.heads(of: h.document) == [h["b2"]])
        #expect(try store.changeCount() == 6)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func pendingChangesSurviveReopening(access: StoreAccess) throws {
        let h = history
        var store = try directory.openStore(for: .named("Receiver"), access: access)
        try store.ingest(trusting: [h["a3"], h["a2"]])
        try store.checkInvariants()
        try store.close()

        store = try directory.openStore(for: .named("Receiver"), access: access)
        #expect(try store.documents() == [h.document])
        #expect(Set(try store.pendingChanges(of: h.document)) == [h["a2"], h["a3"]])
        let result = try store.ingest(trusting: [h["a1"]])
        try store.checkInvariants()
        #expect(result.applied == [h["a1"].id, h["a2"].id, h["a3"].id])
        #expect(try store.pendingChanges(of: h.document).isEmpty)
    }

    @Test func changesOfSeveralDocumentsInOneBatchGoToTheirOwnLogs() throws {
        let other = try SampleHistory.make(in: TemporaryDirectory(), document: Fixtures.otherDocument)
        let store = try directory.openStore(for: .named("Receiver"))
        let mixed = (history.changes + other.changes).reversed()
        let result = try store.ingest(trusting: Array(mixed))
        try store.checkInvariants()
        #expect(result.applied.count == 20)
        #expect(try store.changes(of: history.document).map(\.hash) == history.causalOrder.map(\.hash))
        #expect(try store.changes(of: Fixtures.otherDocument).map(\.hash) == other.causalOrder.map(\.hash))
        #expect(try store.documents() == [history.document, Fixtures.otherDocument].sorted())
    }
}
