import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import GRDB
import Testing

/// Changes nobody vouches for are bounded across the whole store, in bytes and in age, so that a peer cannot park
/// unbounded data under made-up identities in ever new documents, forever (issue 36, item 8).
@Suite(.workPool) struct UnvouchedBoundsTests {
    let directory: TemporaryDirectory
    let a = Device.named("A")
    let receiver = Device.named("Receiver")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A device's first change in document `number`, made up under a throwaway identity: no head of it comes.
    private func junk(_ number: Int, payload: Int = 1_000) -> Change {
        let device = DeviceKey.named("junk \(number)").id
        let document = DocumentID(UUIDBytes(high: 0x0f01_10d0_5704_4000, low: 0x8000_0000_0001_0000 + UInt64(number)))
        let id = ChangeID(device: device, seq: 1)
        return Change(
            document: document, id: id, parents: [], vector: VersionVector([(device, UInt64(1))]), lamport: 1,
            wallTime: Fixtures.start,
            kind: .edit(Edit(operations: Data(repeating: UInt8(number % 256), count: payload))))
    }

    private func size(_ change: Change) -> Int {
        EncodedChange(change).bytes.count
    }

    private func open(
        _ name: String = "receiver.sqlite", clock: ManualClock, access: StoreAccess = .shared, limits: StoreLimits
    ) throws -> ChangeLogStore {
        try ChangeLogStore(at: directory.file(name), device: receiver, clock: clock, access: access, limits: limits)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func unvouchedChangesOfManyDocumentsAreKeptUpToTheByteBoundThenTheOldestMakeRoom(access: StoreAccess) throws {
        let clock = Fixtures.clock()
        let changes = (0..<6).map { junk($0) }
        let each = size(changes[0])
        #expect(changes.allSatisfy { size($0) == each })
        let store = try open(clock: clock, access: access, limits: StoreLimits(unvouchedBytes: 3 * each))

        // Four in one call: three fit, the fourth is turned away (nothing older to drop).
        let first = try store.ingest(Array(changes[0..<4]), heads: [])
        #expect(first.unvouched.count == 3)
        #expect(first.turnedAway.count == 1)
        #expect(first.evicted == 0)
        #expect(try store.unvouched.byteCount() == 3 * each)
        try store.checkInvariants()
        let kept = Set(first.unvouched)

        // A later call: the oldest waiting change makes room for the new one.
        clock.advance(byMilliseconds: 1_000)
        let second = try store.ingest([changes[4]], heads: [])
        #expect(second.unvouched == [changes[4].id])
        #expect(second.evicted == 1)
        #expect(try store.unvouched.byteCount() == 3 * each)
        let waiting = try changes.filter { !(try store.pendingChanges(of: $0.document).isEmpty) }.map(\.id)
        #expect(waiting.count == 3)
        #expect(waiting.contains(changes[4].id))
        #expect(Set(waiting).subtracting([changes[4].id]).isSubset(of: kept))
        try store.checkInvariants()

        // A change larger than the whole bound is turned away, and drops nothing.
        clock.advance(byMilliseconds: 1_000)
        let huge = junk(5, payload: 4 * each)
        let third = try store.ingest([huge], heads: [])
        #expect(third.turnedAway == [huge.id])
        #expect(third.evicted == 0)
        #expect(try store.unvouched.byteCount() == 3 * each)
        try store.checkInvariants()
    }

    /// The report's case, scaled down: one large unsigned change per message, each under a new document. The file
    /// stops growing at the bound (the space of evicted changes is reused), and stays there across a restart.
    @Test func largeUnsignedChangesUnderNewDocumentsDoNotGrowTheFile() throws {
        let clock = Fixtures.clock()
        let limits = StoreLimits(unvouchedBytes: 4 << 20)
        var store = try open(clock: clock, access: .exclusive, limits: limits)
        var evicted = 0
        for number in 0..<20 {
            clock.advance(byMilliseconds: 1_000)
            let result = try store.ingest([junk(number, payload: 512 << 10)], heads: [])
            #expect(result.unvouched.count == 1)
            evicted += result.evicted
        }
        #expect(evicted >= 12)
        #expect(try store.unvouched.byteCount() <= 4 << 20)
        let size = try store.byteSize()
        #expect(size < 6 << 20, "the file grew to \(size) bytes")
        try store.checkInvariants()
        try store.close()

        store = try open(clock: clock, access: .exclusive, limits: limits)
        clock.advance(byMilliseconds: 1_000)
        try store.ingest([junk(99, payload: 512 << 10)], heads: [])
        #expect(try store.unvouched.byteCount() <= 4 << 20)
        #expect(try store.byteSize() < 6 << 20)
        try store.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func theByteBoundHoldsAcrossReopening(access: StoreAccess) throws {
        let clock = Fixtures.clock()
        let changes = (0..<5).map { junk($0) }
        let each = size(changes[0])
        var store = try open(clock: clock, access: access, limits: StoreLimits(unvouchedBytes: 3 * each))
        #expect(try store.ingest(Array(changes[0..<3]), heads: []).unvouched.count == 3)
        try store.close()

        // Reopened with a smaller bound: the total is read from the file, and the next one evicts down to it.
        clock.advance(byMilliseconds: 1_000)
        store = try open(clock: clock, access: access, limits: StoreLimits(unvouchedBytes: 2 * each))
        #expect(try store.unvouched.byteCount() == 3 * each)
        let result = try store.ingest([changes[3]], heads: [])
        #expect(result.unvouched == [changes[3].id])
        #expect(result.evicted == 2)
        #expect(try store.unvouched.byteCount() == 2 * each)
        try store.checkInvariants()
        try store.close()

        store = try open(clock: clock, access: access, limits: StoreLimits(unvouchedBytes: 2 * each))
        #expect(try store.unvouched.byteCount() == 2 * each)
        // At the time of the last call: only what arrived before it (the one left of the first three) may make
        // room, and does.
        let again = try store.ingest([changes[4]], heads: [])
        #expect(again.unvouched == [changes[4].id])
        #expect(again.evicted == 1)
        #expect(try store.unvouched.byteCount() == 2 * each)
        try store.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anUnvouchedChangeExpiresAVouchedWaitingOneDoesNot(access: StoreAccess) throws {
        let clock = Fixtures.clock()
        let store = try open(clock: clock, access: access, limits: StoreLimits(unvouchedAge: .seconds(3_600)))
        let storeA = try directory.openStore(for: a)
        let chain = try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: Fixtures.document)
        // a2 is vouched for and waits for a1; the junk waits for a head.
        let early = try store.ingest([chain[1]], heads: [SignedHead(signing: chain[1], with: .named("A"))])
        #expect(early.deferred == 1)
        let old = junk(1)
        #expect(try store.ingest([old], heads: []).unvouched == [old.id])

        clock.advance(byMilliseconds: 1_800_000)
        let young = junk(2)
        let half = try store.ingest([young], heads: [])
        #expect(half.unvouched == [young.id])
        #expect(half.expired == 0)

        // An hour after the first arrived: it goes at the next ingest, the younger one and the vouched one stay.
        clock.advance(byMilliseconds: 1_800_000)
        let next = try store.ingest([junk(3)], heads: [])
        #expect(next.expired == 1)
        #expect(try store.pendingChanges(of: old.document).isEmpty)
        #expect(try store.pendingChanges(of: young.document).map(\.id) == [young.id])
        #expect(try store.pendingChanges(of: Fixtures.document).map(\.id) == [chain[1].id])
        #expect(try store.unvouched.byteCount() == size(young) + size(junk(3)))
        try store.checkInvariants()

        // The explicit call, as a server would make it: nothing before the age, then the rest of the junk.
        let later = Fixtures.start.advanced(by: 3_600_000 + 1_800_000)
        #expect(try store.unvouched.dropExpired(now: later.advanced(by: -1)) == 0)
        #expect(try store.unvouched.dropExpired(now: later) == 1)
        #expect(try store.unvouched.dropExpired(now: later.advanced(by: 3_600_000)) == 1)
        #expect(try store.unvouched.byteCount() == 0)
        #expect(try store.pendingChanges(of: Fixtures.document).map(\.id) == [chain[1].id])
        try store.checkInvariants()

        // Days later, the vouched change still enters with what it waited for.
        clock.advance(byMilliseconds: 3 * 86_400_000)
        let rest = try store.ingest([chain[0]], heads: [SignedHead(signing: chain[1], with: .named("A"))])
        #expect(rest.applied == chain.map(\.id))
        #expect(rest.expired == 0)
        try store.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aLaterHeadLetsAKeptUnvouchedChangeIn(access: StoreAccess) throws {
        let clock = Fixtures.clock()
        let storeA = try directory.openStore(for: a)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: Fixtures.document)
        let store = try open(
            clock: clock, access: access, limits: StoreLimits(unvouchedBytes: size(a1) + 2 * size(junk(1))))
        #expect(try store.ingest([a1], heads: []).unvouched == [a1.id])
        clock.advance(byMilliseconds: 1_000)
        // Junk after it fills the bound without pushing it out.
        let filling = try store.ingest([junk(1), junk(2)], heads: [])
        #expect(filling.unvouched.count == 2 && filling.evicted == 0)
        clock.advance(byMilliseconds: 1_000)
        let vouched = try store.ingest([a1], heads: [SignedHead(signing: a1, with: .named("A"))])
        #expect(vouched.applied == [a1.id])
        #expect(try store.unvouched.byteCount() == 2 * size(junk(1)))
        try store.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func theStoreReportsItsSizeOnDisk(access: StoreAccess) throws {
        let store = try open(clock: Fixtures.clock(), access: access, limits: StoreLimits())
        let empty = try store.byteSize()
        #expect(empty > 0)
        try store.ingest([junk(1, payload: 200_000)], heads: [])
        let grown = try store.byteSize()
        // Pages the empty store had free are reused first.
        #expect(grown >= empty + 150_000, "\(empty) \(grown)")
        // What the file holds once the write-ahead log is folded into it.
        try store.close()
        let file = try FileManager.default.attributesOfItem(atPath: directory.file("receiver.sqlite").path)[.size]
        #expect((file as? Int) == grown)
    }

    /// A store written before waiting changes recorded their arrival and size gets both when it is opened: the
    /// time of the migration, and the length of the body; the total of unvouched bytes counts the ones that wait.
    @Test func anOlderStoresWaitingChangesGetAnArrivalAndASize() throws {
        let storeA = try directory.openStore(for: a)
        let chain = try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: Fixtures.document)
        let url = directory.file("receiver.sqlite")
        var store = try open(clock: Fixtures.clock(), limits: StoreLimits())
        try store.ingest([chain[1]], heads: [SignedHead(signing: chain[1], with: .named("A"))])
        let old = junk(1)
        try store.ingest([old], heads: [])
        try store.close()

        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    DROP TRIGGER pending_unvouched_added;
                    DROP TRIGGER pending_unvouched_removed;
                    DROP TRIGGER pending_unvouched_vouched;
                    DROP TABLE pending_total;
                    DROP INDEX pending_unvouched_by_arrival;
                    ALTER TABLE pending DROP COLUMN arrived;
                    ALTER TABLE pending DROP COLUMN size;
                    DELETE FROM grdb_migrations WHERE identifier = 'v6 pending arrival';
                    """)
        }
        try queue.close()

        let before = SystemClock().now()
        store = try open(clock: Fixtures.clock(), limits: StoreLimits())
        let after = SystemClock().now()
        try store.checkInvariants()
        #expect(try store.unvouched.byteCount() == size(old))
        // Rows that waited arrived when the store was migrated, by the wall clock, to the second.
        let day: Int64 = 86_400_000
        #expect(try store.unvouched.dropExpired(now: before.advanced(by: day - 1_000 - 1)) == 0)
        #expect(try store.unvouched.dropExpired(now: after.advanced(by: day)) == 1)
        #expect(try store.pendingChanges(of: Fixtures.document).map(\.id) == [chain[1].id])
        #expect(try store.unvouched.byteCount() == 0)
        try store.checkInvariants()
    }
}
