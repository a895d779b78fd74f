import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Synchronization
import Testing

@Suite(.workPool) struct AppendTests {
    let directory: TemporaryDirectory
    let a = Device.named("A")
    let b = Device.named("B")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test func aChangeMadeOnAnOlderVersionStillFollowsItsAuthorsLatestChange() throws {
        let store = try directory.openStore(for: a)
        let first = try store.append(Fixtures.edit("one"), to: document)
        let second = try store.append(Fixtures.edit("two"), to: document)
        // Made "on" the first change: the author's own second change joins the parents, since a device's changes
        // form one line.
        let third = try store.append(Fixtures.edit("three"), to: document, on: .heads([first.hash]))
        try store.checkInvariants()
        #expect(third.parents == [second.hash].sorted())
        #expect(third.vector == VersionVector.of([(a.id, 3)]))

        // Another identity of the device can be concurrent with that line.
        let external = store.key.externalKey.device(named: "A (another program)")
        #expect(external.id != a.id)
        #expect(external.id == DeviceKey.named("A").externalKey.id, "derived, so the same on every run")
        let outside = try store.append(
            [Fixtures.edit("outside")], to: document, on: .heads([first.hash]), author: external)[0]
        try store.checkInvariants()
        #expect(outside.id == ChangeID(device: external.id, seq: 1))
        #expect(outside.parents == [first.hash])
        #expect(outside.vector.compare(to: third.vector) == .concurrent)
        #expect(Set(try store.heads(of: document).map(\.hash)) == [third.hash, outside.hash])
        #expect(try store.devices.all().contains(external))
    }

    @Test func numbersChangesOneTwoThreeOnTheirPreviousHead() throws {
        let clock = Fixtures.clock()
        let store = try directory.openStore(for: a, clock: clock)
        var made: [Change] = []
        for index in 1...3 {
            clock.advance(byMilliseconds: 1000)
            made.append(try store.append(Fixtures.edit("edit \(index)"), to: document))
            try store.checkInvariants()
        }

        #expect(made.map(\.id) == (1...3).map { ChangeID(device: a.id, seq: UInt64($0)) })
        #expect(made.map(\.lamport) == [1, 2, 3])
        #expect(made.map(\.vector) == (1...3).map { VersionVector.of([(a.id, UInt64($0))]) })
        #expect(made[0].parents.isEmpty)
        #expect(made[1].parents == [made[0].hash])
        #expect(made[2].parents == [made[1].hash])
        #expect(made.map(\.wallTime) == (1...3).map { Fixtures.start.advanced(by: Int64($0) * 1000) })
        #expect(made.map(\.document) == [document, document, document])
        #expect(made[2].kind == Fixtures.edit("edit 3"))
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 3)]))
        #expect(try store.heads(of: document) == [made[2]])
        #expect(try store.changes(of: document) == made)
        #expect(try store.changeCount() == 3)
        #expect(try store.documents() == [document])
    }

    @Test func numbersEachDocumentSeparately() throws {
        let store = try directory.openStore(for: a)
        try store.append([Fixtures.edit("1"), Fixtures.edit("2")], to: document)
        try store.checkInvariants()
        let other = try store.append(Fixtures.edit("other"), to: Fixtures.otherDocument)
        try store.checkInvariants()

        #expect(other.id == ChangeID(device: a.id, seq: 1))
        #expect(other.parents.isEmpty)
        #expect(other.lamport == 1)
        #expect(try store.vector(of: Fixtures.otherDocument) == VersionVector.of([(a.id, 1)]))
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 2)]))
        #expect(try store.documents() == [document, Fixtures.otherDocument].sorted())
        #expect(try store.changeCount() == 3)
    }

    @Test func appendsOnEveryHeadWithTheMergedVectorAndAHigherLamport() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        try storeA.checkInvariants()
        // B makes five changes of its own, so its lamport runs ahead of A's.
        let bs = try storeB.append((1...5).map { Fixtures.edit("b\($0)") }, to: document)
        try storeB.checkInvariants()
        try storeB.sync(document, to: storeA)

        let heads = try storeA.heads(of: document)
        #expect(heads.map(\.id) == [a1.id, bs[4].id], "heads in causal order: lamport 1 before lamport 5")

        let merge = try storeA.append(Fixtures.edit("a2"), to: document)
        try storeA.checkInvariants()
        #expect(merge.id == ChangeID(device: a.id, seq: 2))
        #expect(merge.parents == [a1.hash, bs[4].hash].sorted())
        #expect(merge.vector == VersionVector.of([(a.id, 2), (b.id, 5)]))
        #expect(merge.lamport == 6)
        #expect(try storeA.heads(of: document) == [merge])
    }

    @Test func batchAppendChainsTheChangesAndReturnsThemInOrder() throws {
        let store = try directory.openStore(for: a)
        let first = try store.append(Fixtures.edit("first"), to: document)
        try store.checkInvariants()
        let batch = try store.append((1...4).map { Fixtures.edit("batch \($0)") }, to: document)
        try store.checkInvariants()

        #expect(batch.map(\.id.seq) == [2, 3, 4, 5])
        #expect(batch.map(\.lamport) == [2, 3, 4, 5])
        #expect(batch.map(\.parents) == [[first.hash]] + batch.dropLast().map { [$0.hash] })
        #expect(batch.map(\.kind) == (1...4).map { Fixtures.edit("batch \($0)") })
        #expect(try store.changes(of: document) == [first] + batch)
        #expect(try store.append([], to: document).isEmpty)
        try store.checkInvariants()
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 5)]))
    }

    /// A reader on another connection never sees part of a batch: each batch commits in one transaction.
    @Test func batchAppendIsOneTransaction() throws {
        let writer = try directory.openStore("shared.sqlite", as: a)
        let reader = try directory.openStore("shared.sqlite", as: b)
        let batchSize: UInt64 = 40
        let batches: UInt64 = 40
        let device = a.id
        let document = document
        let observations = Observations()
        // A thread of its own, so that it reads while this test writes even when every other thread is busy.
        let thread = Thread {
            while !observations.isDone {
                do { observations.record(try reader.vector(of: document)[device]) } catch { observations.fail(error) }
            }
            observations.finish()
        }
        thread.start()
        while observations.seen.isEmpty && !observations.isDone { usleep(100) }
        for batch in 0..<batches {
            try writer.append((0..<batchSize).map { Fixtures.edit("batch \(batch) item \($0)") }, to: document)
        }
        try writer.checkInvariants()
        observations.stop()
        observations.waitUntilFinished()

        #expect(observations.error == nil, "\(observations.error ?? "")")
        let seen = observations.seen
        #expect(try reader.vector(of: document)[device] == batches * batchSize)
        let torn = seen.filter { $0 % batchSize != 0 }
        #expect(torn.count == 0, "a reader saw a partly committed batch: \(torn.prefix(5))")
        #expect(Set(seen).count > 1, "the reader should have observed the log while it grew: \(Set(seen).sorted())")
    }

    @Test func reopeningTheStoreContinuesTheNumbering() throws {
        let clock = Fixtures.clock()
        var store = try directory.openStore(for: a, clock: clock)
        let before = try store.append((1...3).map { Fixtures.edit("before \($0)") }, to: document)
        try store.checkInvariants()
        try store.close()

        store = try directory.openStore(for: a, clock: clock)
        try store.checkInvariants()
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 3)]))
        let after = try store.append(Fixtures.edit("after"), to: document)
        try store.checkInvariants()
        #expect(after.id == ChangeID(device: a.id, seq: 4))
        #expect(after.parents == [before[2].hash])
        #expect(after.lamport == 4)
        try store.close()

        // Another device opening the same file starts its own numbering on the same heads.
        store = try directory.openStore("A.sqlite", as: b, clock: clock)
        let fromB = try store.append(Fixtures.edit("from B"), to: document)
        try store.checkInvariants()
        #expect(fromB.id == ChangeID(device: b.id, seq: 1))
        #expect(fromB.parents == [after.hash])
        #expect(fromB.vector == VersionVector.of([(a.id, 4), (b.id, 1)]))
        #expect(fromB.lamport == 5)
        #expect(try store.changes(of: document).map(\.id.seq) == [1, 2, 3, 4, 1])
    }
}

/// What a reading thread saw, and the flags that stop it.
private final class Observations: Sendable {
    private struct State {
        var seen: [UInt64] = []
        var error: String?
        var done = false
        var finished = false
    }
    private let state = Mutex(State())

    var seen: [UInt64] { state.withLock { $0.seen } }
    var error: String? { state.withLock { $0.error } }
    var isDone: Bool { state.withLock { $0.done } }
    func record(_ value: UInt64) { state.withLock { $0.seen.append(value) } }
    func fail(_ error: any Error) {
        state.withLock {
            $0.error = "\(error)"
            $0.done = true
        }
    }
    func stop() { state.withLock { $0.done = true } }
    func finish() { state.withLock { $0.finished = true } }
    func waitUntilFinished() {
        while !state.withLock({ $0.finished }) { usleep(1000) }
    }
}
