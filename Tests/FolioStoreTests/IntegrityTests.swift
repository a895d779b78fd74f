import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A reused device identity and impossible changes are refused, and the whole ingest call is rolled back.
@Suite(.workPool) struct IntegrityTests {
    let directory: TemporaryDirectory
    let a = Device.named("A")
    let c = Device.named("C")
    let document = Fixtures.document
    /// A's changes, and those of a clone of A (same identity, another store) that made different edits.
    let original: [Change]
    let clone: [Change]
    /// An unrelated valid change, by C.
    let c1: Change

    init() throws {
        directory = try TemporaryDirectory()
        let storeA = try directory.openStore(for: a)
        original = try storeA.append([Fixtures.edit("original 1"), Fixtures.edit("original 2")], to: Fixtures.document)
        try storeA.checkInvariants()
        let storeClone = try directory.openStore("clone.sqlite", as: a)
        clone = try storeClone.append([Fixtures.edit("clone 1"), Fixtures.edit("clone 2")], to: Fixtures.document)
        try storeClone.checkInvariants()
        let storeC = try directory.openStore(for: c)
        c1 = try storeC.append(Fixtures.edit("c1"), to: Fixtures.document)
        try storeC.checkInvariants()
    }

    /// Runs `body`, which must throw a ``StoreError``, and returns it.
    private func storeError(_ body: () throws -> Void) throws -> StoreError {
        let error = #expect(throws: StoreError.self) { try body() }
        return try #require(error)
    }

    @Test func theCloneReallyReusesTheIdentity() {
        #expect(original.map(\.id) == clone.map(\.id))
        #expect(original[0].hash != clone[0].hash)
        #expect(original[1].hash != clone[1].hash)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func theSameIdentityWithAnotherHashIsAnIntegrityErrorAndNothingIsApplied(access: StoreAccess) throws {
        let store = try directory.openStore(for: .named("Receiver"), access: access)
        try store.ingest(trusting: [original[0]])
        try store.checkInvariants()

        // c1 is valid and ready, but shares the call with the clone's first change: nothing may enter.
        let error = try storeError { try store.ingest(trusting: [self.c1, self.clone[0]]) }
        try store.checkInvariants()
        #expect(error.code == .integrity)
        #expect(error.message.contains("\(a.id)"), "names the device: \(error.message)")
        #expect(error.message.contains("seq 1"), "names the seq: \(error.message)")
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 1)]))
        #expect(try store.changes(of: document) == [original[0]], "nothing overwritten, c1 not applied")
        #expect(try store.change(c1.hash, of: document) == nil)
        #expect(try store.change(clone[0].hash, of: document) == nil)
        #expect(try store.change(original[0].hash, of: document) == original[0])
        #expect(try store.pendingChanges(of: document).isEmpty)

        // The store still works: the valid change alone goes in.
        let result = try store.ingest(trusting: [c1])
        try store.checkInvariants()
        #expect(result.applied == [c1.id])
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anIntegrityErrorLaterInTheBatchRollsBackWhatWasAppliedBefore(access: StoreAccess) throws {
        let store = try directory.openStore(for: .named("Receiver"), access: access)
        try store.ingest(trusting: original)
        try store.checkInvariants()

        // A batch is taken in causal order: c1 (lamport 1) is applied before the clone's seq 2 (lamport 2) clashes.
        let error = try storeError { try store.ingest(trusting: [self.clone[1], self.c1]) }
        try store.checkInvariants()
        #expect(error.code == .integrity)
        #expect(error.message.contains("seq 2"), "\(error.message)")
        #expect(try store.changes(of: document) == original)
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 2)]))
        #expect(try store.change(c1.hash, of: document) == nil)
        #expect(try store.heads(of: document) == [original[1]])
    }

    /// A duplicate of a device's latest change is checked against the frontier, an older one against its row: both
    /// find a clash.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aClashIsFoundAtTheLatestChangeAndBelowIt(access: StoreAccess) throws {
        let store = try directory.openStore(for: .named("Receiver"), access: access)
        try store.ingest(trusting: original)
        for (clashing, seq) in [(clone[1], "seq 2"), (clone[0], "seq 1")] {
            let error = try storeError { try store.ingest(trusting: [clashing]) }
            #expect(error.code == .integrity)
            #expect(error.message.contains(seq), "\(error.message)")
        }
        #expect(try store.ingest(trusting: original).duplicates == 2, "the originals are duplicates")
        #expect(try store.changes(of: document) == original)
        try store.checkInvariants()
    }

    /// Two changes with one identity may both wait: the first to arrive is not taken for the real one (it may be
    /// made up), and which one is real shows when they are ready, by their parents.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aClashWithAWaitingChangeWaitsBesideItAndTheOneWhoseParentsArriveIsApplied(access: StoreAccess) throws {
        let store = try directory.openStore(for: .named("Receiver"), access: access)
        // original[1] waits for original[0].
        let parked = try store.ingest(trusting: [original[1]])
        try store.checkInvariants()
        #expect(parked.deferred == 1)

        let result = try store.ingest(trusting: [self.c1, self.clone[1]])
        try store.checkInvariants()
        #expect(result.applied == [c1.id])
        #expect(result.deferred == 1)
        #expect(Set(try store.pendingChanges(of: document).map(\.hash)) == [original[1].hash, clone[1].hash])

        // When its dependency arrives, the original waiting change is the one applied, and the clone is dropped.
        let arrived = try store.ingest(trusting: [original[0]])
        try store.checkInvariants()
        #expect(arrived.applied == [original[0].id, original[1].id])
        #expect(arrived.rejected.map(\.id) == [clone[1].id])
        #expect(Set(try store.changes(of: document)) == Set(original + [c1]))
        #expect(try store.pendingChanges(of: document).isEmpty)
        #expect(try store.verify().isSound)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aCloneOfAnAppliedChangeArrivingInTheSameBatchAsItsOriginal(access: StoreAccess) throws {
        let store = try directory.openStore(for: .named("Receiver"), access: access)
        let error = try storeError { try store.ingest(trusting: [self.original[0], self.clone[0]]) }
        try store.checkInvariants()
        #expect(error.code == .integrity)
        #expect(try store.changeCount() == 0)
        #expect(try store.pendingChanges(of: document).isEmpty)
    }

    @Test func theLocalDeviceRejectsItsOwnIdentityFromAClone() throws {
        let storeA = try directory.openStore(for: a)
        let error = try storeError { try storeA.ingest(trusting: [self.clone[0]]) }
        try storeA.checkInvariants()
        #expect(error.code == .integrity)
        #expect(try storeA.changes(of: document) == original)
    }

    // MARK: Invalid changes

    private func change(
        _ device: Device, _ seq: UInt64, parents: [Change], vector: [(Device, UInt64)], lamport: UInt64
    ) -> Change {
        Change(
            document: document, id: ChangeID(device: device.id, seq: seq), parents: parents.map(\.hash),
            vector: VersionVector(vector.map { ($0.0.id, $0.1) }), lamport: lamport, wallTime: Fixtures.start,
            kind: Fixtures.edit("forged"))
    }

    /// Ingests `forged` after `original` is in the log, in one call with c1, and expects `invalidChange` and no trace.
    private func expectInvalid(_ forged: Change, _ expectedWords: String) throws {
        let store = try directory.openStore(for: .named("Receiver"))
        try store.ingest(trusting: original)
        try store.checkInvariants()
        let error = try storeError { try store.ingest(trusting: [self.c1, forged]) }
        try store.checkInvariants()
        #expect(error.code == .invalidChange, "\(error)")
        #expect(error.message.contains(expectedWords), "\(error.message)")
        #expect(error.message.contains("\(forged.id)"), "names the change: \(error.message)")
        #expect(try store.changes(of: document) == original)
        #expect(try store.pendingChanges(of: document).isEmpty)
        #expect(try store.change(c1.hash, of: document) == nil)
    }

    @Test func aParentOutsideTheVectorIsInvalid() throws {
        let d = Device.named("D")
        try expectInvalid(change(d, 1, parents: [original[0]], vector: [(d, 1)], lamport: 2), "outside its vector")
    }

    @Test func aLamportNotAboveItsParentIsInvalid() throws {
        let d = Device.named("D")
        try expectInvalid(change(d, 1, parents: [original[1]], vector: [(a, 2), (d, 1)], lamport: 2), "not above")
        try expectInvalid(change(d, 1, parents: [original[1]], vector: [(a, 2), (d, 1)], lamport: 1), "not above")
    }

    @Test func noParentAfterOtherChangesIsInvalid() throws {
        let d = Device.named("D")
        try expectInvalid(change(d, 1, parents: [], vector: [(a, 2), (d, 1)], lamport: 3), "names no parent")
    }

    @Test func aParentMissingFromTheLogIsInvalid() throws {
        let d = Device.named("D")
        let stranger = change(Device.named("E"), 1, parents: [], vector: [(Device.named("E"), 1)], lamport: 1)
        try expectInvalid(change(d, 1, parents: [stranger], vector: [(d, 1)], lamport: 2), "not in the log")
    }

    @Test func anInvalidChangeThatWaitedIsDroppedWhenItBecomesReady() throws {
        let d = Device.named("D")
        // Waits for a2, then turns out to have a parent outside its vector.
        let forged = change(d, 1, parents: [original[1], c1], vector: [(a, 2), (d, 1)], lamport: 3)
        let store = try directory.openStore(for: .named("Receiver"))
        try store.ingest(trusting: [c1, original[0]])
        try store.checkInvariants()
        let parked = try store.ingest(trusting: [forged])
        try store.checkInvariants()
        #expect(parked.deferred == 1)

        let result = try store.ingest(trusting: [self.original[1]])
        try store.checkInvariants()
        #expect(result.applied == [original[1].id], "the dependency itself is applied")
        #expect(result.rejected.map(\.id) == [forged.id], "the forged change is rejected")
        #expect(result.rejected.first?.reason.contains("outside its vector") == true)
        #expect(try store.vector(of: document) == VersionVector.of([(a.id, 2), (c.id, 1)]))
        #expect(try store.pendingChanges(of: document).isEmpty, "it no longer blocks the document")
    }

    @Test func aSequenceNumberBeyondSignedSixtyFourBitsIsInvalid() throws {
        let d = Device.named("D")
        let huge = UInt64(Int64.max) + 1
        let store = try directory.openStore(for: .named("Receiver"))
        let error = try storeError {
            try store.ingest(trusting: [self.change(d, huge, parents: [], vector: [(d, huge)], lamport: 1)])
        }
        try store.checkInvariants()
        #expect(error.code == .invalidChange)
        #expect(try store.changeCount() == 0)
    }
}
