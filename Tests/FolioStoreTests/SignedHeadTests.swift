import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A change is accepted as device D's only when a head signed by D's key reaches it through parent hashes: a peer
/// can no longer make a change that others take for someone else's.
@Suite(.workPool) struct SignedHeadTests {
    let directory: TemporaryDirectory
    let a = Device.named("A"), b = Device.named("B"), c = Device.named("C")
    /// Mallory's key: she can sign, but only as herself.
    let mallory = DeviceKey.named("Mallory")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A change in `device`'s name made by someone else, on `parents`.
    private func forged(_ device: DeviceID, seq: UInt64, on parents: [Change], text: String = "forged") -> Change {
        var vector = parents.reduce(VersionVector()) { $0.merging($1.vector) }
        vector[device] = seq
        return Change(
            document: document, id: ChangeID(device: device, seq: seq), parents: parents.map(\.hash), vector: vector,
            lamport: (parents.map(\.lamport).max() ?? 0) + 1, wallTime: Fixtures.start, kind: Fixtures.edit(text))
    }

    // MARK: Keys and heads

    @Test func aKeyProvesTheIdentityItDerivesAndNothingElse() throws {
        let key = DeviceKey.named("A")
        #expect(key.id == a.id)
        #expect(DeviceID(publicKey: key.publicKey) == key.id)
        #expect(DeviceKey.named("A").rawRepresentation == key.rawRepresentation, "a seeded key is the same every run")
        let restored = try DeviceKey(rawRepresentation: key.rawRepresentation)
        #expect(restored.id == key.id)
        #expect(throws: CodecError.self) { try DeviceKey(rawRepresentation: Data(count: 31)) }
        #expect(key.derivedKey(for: "external").id != key.id)
        #expect(key.derivedKey(for: "external").id == DeviceKey.named("A").derivedKey(for: "external").id)
        #expect(DeviceKey().id != DeviceKey().id)
    }

    @Test func aSignedHeadChecksOnlyAsSigned() throws {
        let store = try directory.openStore(for: a)
        let a1 = try store.append(Fixtures.edit("a1"), to: document)
        let head = SignedHead(signing: a1, with: DeviceKey.named("A"))
        #expect(head.isAuthentic)
        #expect(try SignedHead(decoding: head.encoded()) == head)
        #expect(try SignedHead(decoding: head.encoded()).isAuthentic)

        // Any field changed: the signature no longer covers it.
        let other = try store.append(Fixtures.edit("a2"), to: document)
        let variants = [
            SignedHead(
                document: Fixtures.otherDocument, change: head.change, hash: head.hash, publicKey: head.publicKey,
                signature: head.signature),
            SignedHead(
                document: document, change: ChangeID(device: a.id, seq: 2), hash: head.hash, publicKey: head.publicKey,
                signature: head.signature),
            SignedHead(
                document: document, change: head.change, hash: other.hash, publicKey: head.publicKey,
                signature: head.signature),
            SignedHead(
                document: document, change: head.change, hash: head.hash, publicKey: head.publicKey,
                signature: head.signature.enumerated().map { $0.offset == 10 ? $0.element ^ 1 : $0.element }),
            // Mallory's valid signature, naming A: her key is not A's.
            SignedHead(
                document: document, change: head.change, hash: head.hash, publicKey: mallory.publicKey,
                signature: SignedHead(
                    document: document, change: ChangeID(device: mallory.id, seq: 1), hash: head.hash,
                    signedWith: mallory
                ).signature),
        ]
        for variant in variants { #expect(!variant.isAuthentic, "\(variant)") }
    }

    @Test func aHeadThatDoesNotDecodeIsRefusedWithItsPlace() throws {
        let store = try directory.openStore(for: a)
        let head = SignedHead(signing: try store.append(Fixtures.edit("a1"), to: document), with: DeviceKey.named("A"))
        var bytes = head.encoded()
        bytes.removeLast()
        #expect(throws: CodecError.self) { try SignedHead(decoding: bytes) }
        var zeroSeq = head.encoded()
        zeroSeq[32] = 0
        let error = #expect(throws: CodecError.self) { try SignedHead(decoding: zeroSeq) }
        #expect(error?.code == .invalidValue)
        #expect(error?.offset == 32)
    }

    // MARK: Ingest

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func changesWithTheirDevicesHeadsAreApplied(access: StoreAccess) throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b, access: access)
        try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2"), Fixtures.edit("a3")], to: document)
        let result = try storeA.send(document, to: storeB)
        #expect(result.applied.map(\.seq) == [1, 2, 3])
        #expect(result.unvouched.isEmpty && result.refusedHeads.isEmpty)
        try storeB.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aChangeInAnotherDevicesNameIsNeverTakenForItsOwn(access: StoreAccess) throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b, access: access)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        try storeA.send(document, to: storeB)

        // Mallory makes up A's second change. Without a head it waits; with her own head naming A, the head is
        // refused (her key is not A's); with no head of A's, nothing vouches for it.
        let fake = forged(a.id, seq: 2, on: [a1], text: "Mallory's words in A's mouth")
        let bare = try storeB.ingest([fake], heads: [])
        #expect(bare.applied.isEmpty && bare.unvouched == [fake.id])
        let claimed = SignedHead(
            document: document, change: fake.id, hash: fake.hash, publicKey: mallory.publicKey,
            signature: SignedHead(
                document: document, change: ChangeID(device: mallory.id, seq: 2), hash: fake.hash, signedWith: mallory
            ).signature)
        let refused = try storeB.ingest([fake], heads: [claimed])
        #expect(refused.applied.isEmpty)
        #expect(refused.refusedHeads.map(\.head) == [fake.id])
        #expect(refused.refusedHeads.first?.reason.contains("key") == true)
        #expect(try storeB.vector(of: document)[a.id] == 1)

        // A's real second change arrives with A's head: it is taken, and the fake can never be.
        try storeA.append(Fixtures.edit("a2"), to: document)
        let real = try storeA.send(document, to: storeB)
        #expect(real.applied.map(\.seq) == [2])
        #expect(try storeB.changes(of: document).map(\.hash) == storeA.changes(of: document).map(\.hash))
        try storeB.checkInvariants()
    }

    @Test func aHeadVouchesOnlyForItsOwnDevicesChanges() throws {
        let storeA = try directory.openStore(for: a)
        let storeC = try directory.openStore(for: c)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        try storeA.send(document, to: storeC)
        // Mallory builds her own change on a made-up change of A's and signs her own head: hers is vouched for,
        // A's is not, so hers waits for it and neither enters the log.
        let fakeA2 = forged(a.id, seq: 2, on: [a1])
        let m1 = forged(mallory.id, seq: 1, on: [fakeA2], text: "on the fake")
        let result = try storeC.ingest([fakeA2, m1], heads: [SignedHead(signing: m1, with: mallory)])
        #expect(result.applied.isEmpty)
        #expect(result.unvouched == [fakeA2.id])
        #expect(result.deferred == 1)
        #expect(try storeC.changeCount() == 1)
        try storeC.checkInvariants()
    }

    /// The walk from heads keeps the devices that reach a change as bits, the first 64 in a word of their own: a call
    /// with heads of 70 devices carries the last device's head down through another device's change to the earlier
    /// change of its own, and vouches for nothing in the name of a device whose head did not come.
    @Test func headsOfMoreThanSixtyFourDevicesInOneCallVouchForTheirOwnChanges() throws {
        let devices = (0..<70).map { Device.named("many-\($0)") }.sorted { $0.id < $1.id }
        let hub = try ChangeLogStore(inMemoryNamed: "hub", device: Device.named("many-hub"))
        var appended: [Change] = []
        // The last device (bit 69) writes first and last, with the 69 others' changes between.
        let stores = try devices.map { try ChangeLogStore(inMemoryNamed: "store-\($0.name)", device: $0) }
        for store in [stores[69]] + stores.dropLast() + [stores[69]] {
            try hub.send(document, to: store)
            appended.append(try store.append(Fixtures.edit("by \(store.localDevice.name)"), to: document))
            try store.send(document, to: hub)
        }
        let first = appended[0]
        let last = try #require(appended.last)
        #expect(first.id.device == last.id.device && last.id.seq == 2)

        let receiver = try directory.openStore(for: c)
        let heads = try hub.signedHeads(of: document)
        let changes = try hub.changes(of: document)
        // Without the last device's head, neither of its changes is vouched for, and the others wait for its first.
        let withoutIt = try receiver.ingest(changes, heads: heads.filter { $0.change.device != last.id.device })
        #expect(withoutIt.unvouched == [first.id, last.id])
        #expect(withoutIt.applied.isEmpty && withoutIt.deferred == 69)
        // With it, the head of its second change reaches its first through 69 changes of others.
        let withIt = try receiver.ingest(changes, heads: heads)
        #expect(Set(withIt.applied) == Set(appended.map(\.id)))
        #expect(try receiver.vector(of: document) == hub.vector(of: document))
        try receiver.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func changesThatArriveBeforeTheirHeadWaitForIt(access: StoreAccess) throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b, access: access)
        let changes = try storeA.append((1...6).map { Fixtures.edit("a\($0)") }, to: document)
        let heads = try storeA.signedHeads(of: document)
        // A long reply split in two: the head of A's chain is in the second half.
        let first = try storeB.ingest(Array(changes[0..<3]), heads: heads)
        #expect(first.applied.isEmpty)
        #expect(first.unvouched.map(\.seq) == [1, 2, 3])
        let second = try storeB.ingest(Array(changes[3...]), heads: heads)
        #expect(second.applied.map(\.seq) == [1, 2, 3, 4, 5, 6])
        try storeB.checkInvariants()
    }

    @Test func changesInReverseOrderWithTheirHeadAreAllApplied() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let storeC = try directory.openStore(for: c)
        try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: document)
        try storeA.send(document, to: storeB)
        try storeB.append([Fixtures.edit("b1"), Fixtures.edit("b2")], to: document)
        let changes = try storeB.changes(of: document)
        let heads = try storeB.signedHeads(of: document)
        #expect(heads.map(\.change.device).sorted() == [a.id, b.id].sorted(), "B passes A's head on with A's changes")
        for change in changes.reversed() { try storeC.ingest([change], heads: heads) }
        #expect(try storeC.changes(of: document).map(\.hash) == changes.map(\.hash))
        try storeC.checkInvariants()
    }

    @Test func relayedChangesKeepTheirAuthorsHeads() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let storeC = try directory.openStore(for: c)
        try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: document)
        try storeA.send(document, to: storeB)
        // C gets A's changes from B only, with the head A signed.
        let relayed = try storeB.send(document, to: storeC)
        #expect(relayed.applied.count == 2)
        let aHead = try #require(try storeC.signedHeads(of: document).first { $0.change.device == a.id })
        #expect(aHead.change.seq == 2)
        #expect(aHead.isAuthentic)
        // A head reopened from the file is the one kept.
        try storeC.close()
        let reopened = try directory.openStore(for: c)
        #expect(try reopened.signedHeads(of: document).contains(aHead))
    }

    @Test func aChangeIngestedOnTrustIsPassedOnWithoutAHeadAndWaitsAtThePeer() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let storeC = try directory.openStore(for: c)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        try storeB.ingest(trusting: [a1])
        #expect(try storeB.signedHeads(of: document).isEmpty)
        let result = try storeB.send(document, to: storeC)
        #expect(result.applied.isEmpty && result.unvouched == [a1.id])
        // Once A's head comes, from anyone, the waiting change enters.
        let later = try storeA.send(document, to: storeC)
        #expect(later.applied == [a1.id])
    }

    @Test func theStoreKeepsItsKeyAndToolsOpenItAsItsDevice() throws {
        let store = try directory.openStore(for: a)
        try store.close()
        let identity = try #require(try DeviceRegistry.localIdentity(ofStoreAt: directory.file("A.sqlite")))
        #expect(identity.key.id == a.id)
        #expect(identity.name == "A")
        #expect(try DeviceRegistry.localIdentity(ofStoreAt: directory.file("absent.sqlite")) == nil)
    }

    // MARK: What the review of the design found

    @Test func aMadeUpChangeUnderALoggedIdentityIsDroppedNotAnIntegrityError() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let a1 = try storeA.append(Fixtures.edit("a1"), to: document)
        try storeA.send(document, to: storeB)
        let fake = forged(a.id, seq: 1, on: [], text: "not a1")
        let a2 = try storeA.append(Fixtures.edit("a2"), to: document)
        // One message with the fake and A's real next change: the fake goes, a2 enters.
        let result = try storeB.ingest([fake, a2], heads: storeA.signedHeads(of: document))
        #expect(result.rejected.map(\.id) == [fake.id])
        #expect(result.applied == [a2.id])
        #expect(try storeB.change(a1.hash, of: document) == a1)
        try storeB.checkInvariants()
    }

    @Test func twoChangesSignedUnderOneIdentityAreAnIntegrityError() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        try storeA.append(Fixtures.edit("a1"), to: document)
        try storeA.send(document, to: storeB)
        // A clone holding A's key signs another first change.
        let clone = forged(a.id, seq: 1, on: [], text: "the clone's")
        let error = #expect(throws: StoreError.self) {
            try storeB.ingest([clone], heads: [SignedHead(signing: clone, with: .named("A"))])
        }
        #expect(error?.code == .integrity)
        #expect(error?.message.contains("two devices") == true)
    }

    @Test func aHeadThatNamesItsChangeWithAnotherSeqIsRefused() throws {
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let changes = try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: document)
        // A's key signs "seq 5 has a2's hash": authentic, but not what a2 is.
        let wrong = SignedHead(
            document: document, change: ChangeID(device: a.id, seq: 5), hash: changes[1].hash, signedWith: .named("A"))
        let result = try storeB.ingest(changes, heads: [wrong])
        #expect(result.applied.isEmpty)
        #expect(result.refusedHeads.map(\.head) == [wrong.change])
    }

    @Test func changesNobodyVouchesForHaveABudgetOfTheirOwn() throws {
        let storeA = try directory.openStore(for: a)
        let cramped = try ChangeLogStore(
            at: directory.file("cramped.sqlite"), device: c, clock: Fixtures.clock(),
            limits: StoreLimits(waitingChangesPerDocument: 10, unvouchedChangesPerDocument: 2))
        let junk = (1...3).map { forged(DeviceKey.named("junk \($0)").id, seq: 1, on: [], text: "junk") }
        let result = try cramped.ingest(junk, heads: [])
        #expect(result.unvouched.count == 2)
        #expect(result.turnedAway.count == 1)
        // Changes that wait for their dependencies still find room.
        let chain = try storeA.append([Fixtures.edit("a1"), Fixtures.edit("a2")], to: document)
        let early = try cramped.ingest([chain[1]], heads: [SignedHead(signing: chain[1], with: .named("A"))])
        #expect(early.deferred == 1)
        let rest = try cramped.ingest([chain[0]], heads: [SignedHead(signing: chain[1], with: .named("A"))])
        #expect(rest.applied == chain.map(\.id))
        try cramped.checkInvariants()
    }

    @Test func aStoreIsTheDeviceItWasFirstOpenedAs() throws {
        let store = try directory.openStore("shared.sqlite", as: a)
        try store.close()
        let again = try directory.openStore("shared.sqlite", as: b)
        try again.close()
        let identity = try #require(try DeviceRegistry.localIdentity(ofStoreAt: directory.file("shared.sqlite")))
        #expect(identity.key.id == a.id)
    }
}
