import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Changes made up by a peer that lies: whatever they claim, a store takes only a history that `verify` accepts,
/// never one that stops it from appending or syncing, and never a change in its own device's name.
@Suite(.workPool) struct HostilePeerTests {
    let directory: TemporaryDirectory
    let a = Device.named("A"), b = Device.named("B"), c = Device.named("C")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Runs `body`, which must throw a ``StoreError``, and returns it.
    private func storeError(_ body: () throws -> Void) throws -> StoreError {
        let error = #expect(throws: StoreError.self) { try body() }
        return try #require(error)
    }

    /// A change of `device` put together by hand, as a lying peer may.
    private func forged(
        _ device: Device, seq: UInt64 = 1, parents: [Change] = [], vector: VersionVector? = nil, lamport: UInt64,
        text: String = "forged"
    ) -> Change {
        var context = vector ?? parents.reduce(VersionVector()) { $0.merging($1.vector) }
        if vector == nil { context[device.id] = seq }
        return Change(
            document: document, id: ChangeID(device: device.id, seq: seq), parents: parents.map(\.hash),
            vector: context,
            lamport: lamport, wallTime: Fixtures.start, kind: Fixtures.edit(text))
    }

    // MARK: Numbers

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aLamportTimestampFarAheadOfItsParentsIsRefusedAndAppendingGoesOn(access: StoreAccess) throws {
        let store = try directory.openStore(for: a, access: access)
        for lamport in [UInt64(Int64.max), ChangeLimits.counter, ChangeLimits.lamportStep + 1] {
            let error = try storeError { try store.ingest(trusting: [forged(b, lamport: lamport)]) }
            #expect(error.code == .invalidChange, "\(lamport): \(error)")
            #expect(error.message.contains("lamport"), "\(error.message)")
        }
        try store.checkInvariants()
        #expect(try store.changeCount() == 0)
        let appended = try store.append(Fixtures.edit("a1"), to: document)
        #expect(appended.lamport == 1)
    }

    @Test func aStepOfExactlyTheLimitIsTakenAndTheNextChangesStayWithinIt() throws {
        let store = try directory.openStore(for: a)
        let a1 = try store.append(Fixtures.edit("a1"), to: document)
        let far = forged(b, parents: [a1], lamport: a1.lamport + ChangeLimits.lamportStep)
        try store.ingest(trusting: [far])
        try store.checkInvariants()
        // On every head, one above the highest seen.
        let onEverything = try store.append(Fixtures.edit("a2"), to: document)
        #expect(onEverything.lamport == far.lamport + 1)

        // A peer takes all of it.
        let peer = try directory.openStore(for: c)
        try peer.ingest(trusting: try store.changes(of: document))
        try peer.checkInvariants()
        #expect(try peer.vector(of: document) == store.vector(of: document))
        #expect(try peer.verify().isSound)
    }

    @Test func aChangeBuiltOnAnOldVersionAfterAFarJumpStaysWithinTheStep() throws {
        let store = try directory.openStore(for: a)
        let a1 = try store.append(Fixtures.edit("a1"), to: document)
        // B jumped far ahead on a1; A then edits the version it shows, a1, concurrently with B.
        try store.ingest(trusting: [forged(b, parents: [a1], lamport: a1.lamport + ChangeLimits.lamportStep)])
        let b2 = forged(
            b, seq: 2, parents: [try #require(store.heads(of: document).first)],
            lamport: a1.lamport + 2 * ChangeLimits.lamportStep)
        try store.ingest(trusting: [b2])
        let onA1 = try store.append(Fixtures.edit("a2"), to: document, on: .heads([a1.hash]))
        #expect(onA1.lamport == a1.lamport + ChangeLimits.lamportStep)

        let peer = try directory.openStore(for: c)
        try peer.ingest(trusting: try store.changes(of: document))
        try peer.checkInvariants()
        #expect(try peer.heads(of: document).map(\.hash).sorted() == [b2.hash, onA1.hash].sorted())
    }

    // MARK: The local device's name

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aChangeInTheLocalDevicesNameThatItDidNotMakeIsRefused(access: StoreAccess) throws {
        let store = try directory.openStore(for: a, access: access)
        let a1 = try store.append(Fixtures.edit("a1"), to: document)
        for fake in [forged(a, seq: 2, parents: [a1], lamport: 2), forged(a, seq: 1, lamport: 1, text: "another a1")] {
            let error = try storeError { try store.ingest(trusting: [fake]) }
            #expect([.invalidChange, .integrity].contains(error.code), "\(error)")
            #expect(error.message.contains("\(a.id)"), "\(error.message)")
        }
        // Not even as a change that waits for others.
        let b1 = forged(b, lamport: 1)
        let error = try storeError {
            try store.ingest(trusting: [self.forged(self.a, seq: 2, parents: [a1, b1], lamport: 3)])
        }
        #expect(error.code == .invalidChange, "\(error)")
        #expect(try store.pendingChanges(of: document).isEmpty)
        try store.checkInvariants()
        #expect(try store.changes(of: document) == [a1])
        #expect(try store.append(Fixtures.edit("a2"), to: document).id.seq == 2)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aForgedChangeThatWaitsDoesNotBlockTheRealOne(access: StoreAccess) throws {
        let storeB = try directory.openStore(for: b)
        let real = try storeB.append([Fixtures.edit("b1"), Fixtures.edit("b2")], to: document)
        // Someone who saw b1 makes up a b2 of their own and gets it to the receiver first, where it waits for b1.
        let fake = forged(b, seq: 2, parents: [real[0]], lamport: 2, text: "not what B wrote")
        let receiver = try directory.openStore(for: c, access: access)
        #expect(try receiver.ingest(trusting: [fake]).deferred == 1)

        // The real changes arrive: syncing does not fail, and the real b2 is the one in the log.
        let result = try receiver.ingest(trusting: real)
        try receiver.checkInvariants()
        #expect(result.applied == real.map(\.id))
        #expect(result.rejected.map(\.id) == [fake.id])
        #expect(try receiver.changes(of: document) == real)
        #expect(try receiver.pendingChanges(of: document).isEmpty)
        #expect(try receiver.verify().isSound)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aForgedChangeWaitingForSomethingElseIsDroppedWhenTheRealOneIsApplied(access: StoreAccess) throws {
        let storeB = try directory.openStore(for: b)
        let real = try storeB.append([Fixtures.edit("b1"), Fixtures.edit("b2")], to: document)
        // The made-up b2 also claims a change nobody will ever send, so it would wait for good.
        let ghost = Device.named("Ghost")
        var claims = real[0].vector
        claims[ghost.id] = 1
        claims[b.id] = 2
        let fake = forged(b, seq: 2, parents: [real[0]], vector: claims, lamport: 2)
        let receiver = try directory.openStore(for: c, access: access)
        #expect(try receiver.ingest(trusting: [fake]).deferred == 1)

        let result = try receiver.ingest(trusting: real)
        try receiver.checkInvariants()
        #expect(result.applied == real.map(\.id))
        #expect(result.rejected.map(\.id) == [fake.id])
        #expect(try receiver.pendingChanges(of: document).isEmpty)
        #expect(try receiver.verify().isSound)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func twoChangesWaitingWithOneIdentityDoNotBlockEachOther(access: StoreAccess) throws {
        let storeB = try directory.openStore(for: b)
        let real = try storeB.append([Fixtures.edit("b1"), Fixtures.edit("b2")], to: document)
        let fake = forged(b, seq: 2, parents: [real[0]], lamport: 2, text: "not what B wrote")
        let receiver = try directory.openStore(for: c, access: access)
        #expect(try receiver.ingest(trusting: [fake]).deferred == 1)
        #expect(try receiver.ingest(trusting: [real[1]]).deferred == 1, "the second waits beside the first")
        #expect(Set(try receiver.pendingChanges(of: document).map(\.hash)) == [fake.hash, real[1].hash])

        // b1 arrives: one b2 is taken, the other dropped, and the store is sound.
        let result = try receiver.ingest(trusting: [real[0]])
        try receiver.checkInvariants()
        #expect(result.applied.map(\.seq) == [1, 2])
        #expect(result.rejected.count == 1)
        #expect(try receiver.pendingChanges(of: document).isEmpty)
        #expect(try receiver.changes(of: document).count == 2)
        #expect(try receiver.verify().isSound)
    }

    // MARK: What verify accepts

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aVectorThatClaimsMoreThanItsParentsGiveIsRefused(access: StoreAccess) throws {
        let storeA = try directory.openStore(for: a)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        let b1 = forged(b, lamport: 1)
        // C names a1 as its only parent but claims b1 in its past as well.
        let c1 = forged(c, parents: [a1], vector: VersionVector.of([(a.id, 1), (b.id, 1), (c.id, 1)]), lamport: 2)
        let receiver = try directory.openStore(for: .named("Receiver"), access: access)
        let error = try storeError { try receiver.ingest(trusting: [a1, b1, c1]) }
        #expect(error.code == .invalidChange, "\(error)")
        #expect(error.message.contains("\(c.id)"), "\(error.message)")
        #expect(try receiver.changeCount() == 0, "nothing of the call was applied")
        try receiver.ingest(trusting: [a1, b1])
        #expect(try receiver.verify().isSound)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aChangeNotMadeOnItsDevicesPreviousOneIsRefused(access: StoreAccess) throws {
        let storeA = try directory.openStore(for: a)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        let b1 = forged(b, lamport: 1)
        // b2 names only a1, so b1 is not in its past, yet its vector says B's second change.
        let b2 = forged(b, seq: 2, parents: [a1], vector: VersionVector.of([(a.id, 1), (b.id, 2)]), lamport: 2)
        let receiver = try directory.openStore(for: .named("Receiver"), access: access)
        try receiver.ingest(trusting: [a1, b1])
        let error = try storeError { try receiver.ingest(trusting: [b2]) }
        #expect(error.code == .invalidChange, "\(error)")
        #expect(try receiver.changeCount() == 2)
        #expect(try receiver.verify().isSound)
    }

    @Test func aWaitingChangeThatProvesInvalidIsDroppedAndTheStoreStaysSound() throws {
        let storeA = try directory.openStore(for: a)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        let b1 = forged(b, lamport: 1)
        let c1 = forged(c, parents: [a1], vector: VersionVector.of([(a.id, 1), (b.id, 1), (c.id, 1)]), lamport: 2)
        let receiver = try directory.openStore(for: .named("Receiver"))
        #expect(try receiver.ingest(trusting: [c1]).deferred == 1)
        let result = try receiver.ingest(trusting: [a1, b1])
        try receiver.checkInvariants()
        #expect(result.rejected.map(\.id) == [c1.id])
        #expect(try receiver.verify().isSound)
    }

    // MARK: Changes that wait

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func theChangesThatWaitAreBounded(access: StoreAccess) throws {
        let store = try ChangeLogStore(
            at: directory.file("bounded.sqlite"), device: .named("Receiver"), clock: Fixtures.clock(), access: access,
            limits: StoreLimits(waitingChangesPerDocument: 10))
        let storeB = try directory.openStore(for: b)
        let chain = try storeB.append((1...16).map { Fixtures.edit("b\($0)") }, to: document)
        // All but the first arrive, one by one: ten wait, the rest are turned away (a peer sends them again).
        for change in chain.dropFirst() { try store.ingest(trusting: [change]) }
        try store.checkInvariants()
        #expect(try store.pendingChanges(of: document).count == 10)
        let result = try store.ingest(trusting: Array(chain.prefix(1)))
        try store.checkInvariants()
        #expect(result.applied == chain.prefix(11).map(\.id))
        try store.ingest(trusting: chain)
        #expect(try store.changes(of: document) == chain)
        #expect(try store.verify().isSound)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aLongChainDeliveredBackwardsOneByOneIsAppliedInOrder(access: StoreAccess) throws {
        let storeB = try directory.openStore(for: b)
        let storeC = try directory.openStore(for: c)
        var chain: [Change] = []
        for round in 0..<20 {
            chain += try storeB.append((0..<5).map { Fixtures.edit("b\(round).\($0)") }, to: document)
            try storeC.ingest(trusting: chain)
            chain += try storeC.append([Fixtures.edit("c\(round)")], to: document)
            try storeB.ingest(trusting: chain)
        }
        chain = Causality.sorted(try storeB.changes(of: document))
        let receiver = try directory.openStore(for: .named("Receiver"), access: access)
        for change in chain.reversed() { try receiver.ingest(trusting: [change]) }
        try receiver.checkInvariants()
        #expect(try receiver.changes(of: document) == chain)
        #expect(try receiver.pendingChanges(of: document).isEmpty)
        #expect(try receiver.verify().isSound)
    }

    // MARK: Names

    /// A peer's device name with a NUL (where SQLite's text would end) or of any length is kept as the store can
    /// hold it, the same in the file as in an exclusive store's memory.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aDeviceNameWithNulOrOfAnyLengthIsKeptAsTheStoreCanHoldIt(access: StoreAccess) throws {
        let store = try directory.openStore(for: a, access: access)
        let nul = Device(id: b.id, name: "\0\0\u{1}Bea")
        let long = Device(id: c.id, name: String(repeating: "é", count: 5_000))
        try store.devices.register([nul, long])
        try store.checkInvariants()
        let names = Dictionary(uniqueKeysWithValues: try store.devices.all().map { ($0.id, $0.name) })
        #expect(names[b.id] == "\u{FFFD}\u{FFFD}\u{1}Bea")
        #expect(names[c.id]?.utf8.count == 1_024)
        #expect(try store.verify().isSound)
    }
}
