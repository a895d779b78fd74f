import FolioCore
import FolioTesting
import Foundation
import Testing

@testable import FolioStore

/// `ChangeLogStore.removeLocalCopy(of:)` leaves the store as if it had never seen the document, in the file and, with
/// exclusive access, in what the store remembers of it; the document is then received again as new.
@Suite struct DocumentRemovalTests {
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func theStoreForgetsTheDocumentAndTakesItAgain(access: StoreAccess) throws {
        let directory = try TemporaryDirectory()
        let peer = try directory.openStore(for: Device.named("Peer"))
        let (first, second) = (Fixtures.document, Fixtures.otherDocument)
        for document in [first, second] {
            try peer.append(
                .lifecycle(.create(name: "Doc", type: "public.plain-text", container: .shared)), to: document)
            for index in 0..<5 { try peer.append(Fixtures.edit("edit \(index)"), to: document) }
        }
        let store = try directory.openStore(for: Device.named("Device"), access: access)
        try store.ingest(trusting: try peer.changes(of: first) + peer.changes(of: second))
        // One of the first waits for a change that has not come.
        let later = try peer.append(Fixtures.edit("later"), to: first)
        let latest = try peer.append(Fixtures.edit("latest"), to: first)
        try store.ingest(trusting: [latest])
        #expect(try store.pendingChanges(of: first).map(\.id) == [latest.id])
        let secondSummary = try store.summaries().filter { $0.document == second }.map { "\($0.vector) \($0.heads)" }

        let removal = try store.removeLocalCopy(of: first)
        #expect(removal.changes == 6)
        #expect(removal.waiting == 1)
        #expect(try store.documents() == [second])
        #expect(try store.vector(of: first).isEmpty)
        #expect(try store.pendingChanges(of: first).isEmpty)
        #expect(try store.summaries().map { "\($0.vector) \($0.heads)" } == secondSummary)
        try store.checkInvariants()
        #expect(try store.removeLocalCopy(of: first) == DocumentRemoval())

        try store.ingest(trusting: try peer.changes(of: first))
        #expect(try store.heads(of: first).map(\.hash) == [latest.hash])
        #expect(try store.changes(of: first).count == 8)
        #expect(try store.pendingChanges(of: first).isEmpty)
        #expect(later.id.seq + 1 == latest.id.seq)
        try store.checkInvariants()
        try store.close()
        let reopened = try directory.openStore(for: Device.named("Device"), access: access)
        #expect(try reopened.documents() == [first, second].sorted())
    }

    /// A folded document's segments go with it, and a fold of what comes again starts afresh.
    @Test func segmentsGoWithTheDocument() throws {
        let directory = try TemporaryDirectory()
        let store = try directory.openStore(for: Device.named("Device"))
        for index in 0..<50 { try store.append(Fixtures.edit("edit \(index)"), to: Fixtures.document) }
        let history = try store.changes(of: Fixtures.document)
        #expect(try store.fold(Fixtures.document, keepingNewest: 5) > 0)
        let segmentIDs = { () throws -> [Int64] in
            try store.read("reading segment ids") { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM segment ORDER BY id")
            }
        }
        let earlier = try segmentIDs()
        #expect(try store.removeLocalCopy(of: Fixtures.document).changes == 50)
        #expect(try store.changes(of: Fixtures.document).isEmpty)
        try store.checkInvariants()
        try store.ingest(trusting: history)
        #expect(try store.changes(of: Fixtures.document) == history)
        #expect(try store.fold(Fixtures.document, keepingNewest: 5) > 0)
        // No segment id is used twice: a reader's cache knows segments by id.
        let again = try segmentIDs()
        #expect(!again.isEmpty && again.min()! > earlier.max()!)
        try store.checkInvariants()
    }

    /// This device's own changes of a removed document come back from a peer, vouched for by the head the store
    /// signed at the removal (nothing else in its names is taken), and until they are back it makes no new change
    /// there, so that no sequence number of its is used twice.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func ownChangesComeBackAsTheyWere(access: StoreAccess) throws {
        let directory = try TemporaryDirectory()
        let device = try directory.openStore(for: Device.named("Device"), access: access)
        let peer = try directory.openStore(for: Device.named("Peer"))
        let document = Fixtures.document
        try Self.write(document, edits: 5, into: device)
        try peer.ingest(try device.changes(of: document), heads: try device.signedHeads(of: document))
        for index in 0..<3 { try peer.append(Fixtures.edit("peer \(index)"), to: document) }
        let own = try device.changes(of: document)
        try device.removeLocalCopy(of: document)

        let refused = #expect(throws: StoreError.self) { try device.append(Fixtures.edit("too soon"), to: document) }
        #expect(refused?.code == .invalidChange)
        #expect(try device.changes(of: document).isEmpty)

        // A change in the device's name beyond what it removed is made up: refused.
        let tip = try #require(own.last)
        var vector = tip.vector
        vector[tip.id.device] = tip.id.seq + 1
        let madeUp = Change(
            document: document, id: ChangeID(device: tip.id.device, seq: tip.id.seq + 1), parents: [tip.hash],
            vector: vector, lamport: tip.lamport + 1, wallTime: tip.wallTime, kind: Fixtures.edit("made up"))
        let forged = #expect(throws: StoreError.self) { try device.ingest([madeUp], heads: []) }
        #expect(forged?.code == .invalidChange)

        // The peer's log, with only the peer's own head: the head signed at the removal vouches for the device's.
        let result = try device.ingest(try peer.changes(of: document), heads: try peer.signedHeads(of: document))
        #expect(result.applied.count == 9)
        #expect(try device.heads(of: document).map(\.hash) == (try peer.heads(of: document).map(\.hash)))
        try device.checkInvariants()
        let next = try device.append(Fixtures.edit("again"), to: document)
        #expect(next.id.seq == 7)
        try device.checkInvariants()
    }

    /// Own changes that come back in parts, each with the peer's heads of the device's changes, are taken part by
    /// part; a store reopened between removal and return still takes them.
    @Test func ownChangesComeBackInPartsAfterAReopening() throws {
        let directory = try TemporaryDirectory()
        var device = try directory.openStore(for: Device.named("Device"))
        let peer = try directory.openStore(for: Device.named("Peer"))
        let document = Fixtures.document
        for index in 0..<600 { try device.append(Fixtures.edit("own \(index)"), to: document) }
        for start in stride(from: 0, to: 600, by: 100) {
            let part = try device.changes(of: document).filter { $0.id.seq > start && $0.id.seq <= start + 100 }
            let last = try #require(part.last)
            try peer.ingest(part, heads: [try #require(device.signedHead(for: last))])
        }
        try device.removeLocalCopy(of: document)
        try device.close()
        device = try directory.openStore(for: Device.named("Device"))

        let history = try peer.changes(of: document)
        let heads = try peer.signedHeads(of: document)
        #expect(heads.count > 1)
        for start in stride(from: 0, to: 600, by: 150) {
            let part = Array(history[start..<start + 150])
            let partHeads = heads.filter { $0.change.seq > UInt64(start) && $0.change.seq <= UInt64(start + 150) }
            try device.ingest(part, heads: partHeads)
        }
        #expect(try device.changes(of: document) == history)
        #expect(try device.pendingChanges(of: document).isEmpty)
        #expect(try device.append(Fixtures.edit("again"), to: document).id.seq == 601)
        try device.checkInvariants()
    }

    /// Settling stops waiting for the changes that did not come back, drops a change in the device's name that
    /// nothing it signed vouches for (a peer that makes one up does not keep the device from writing), and the next
    /// change takes the sequence number after the last that came back.
    @Test func settlingDropsChangesInTheDevicesNameThatNothingVouchesFor() throws {
        let directory = try TemporaryDirectory()
        let device = try directory.openStore(for: Device.named("Device"))
        let peer = try directory.openStore(for: Device.named("Peer"))
        let document = Fixtures.document
        try Self.write(document, edits: 4, into: device)
        let own = try device.changes(of: document)
        // The peer has the first three; the last two never left the device.
        try peer.ingest(Array(own.prefix(3)), heads: [try #require(device.signedHead(for: own[2]))])
        try device.removeLocalCopy(of: document)
        #expect(try device.documentsAwaitingOwnChanges() == [document])
        // Nothing came back yet: nothing to settle.
        #expect(try !device.settleRemovedOwnChanges(of: document))

        // A change made up in the device's name, below the removed head's seq, waits unvouched.
        var vector = own[2].vector
        vector[own[2].id.device] = 5
        let madeUp = Change(
            document: document, id: ChangeID(device: own[2].id.device, seq: 5), parents: [own[2].hash],
            vector: vector, lamport: own[2].lamport + 1, wallTime: own[2].wallTime, kind: Fixtures.edit("made up"))
        let result = try device.ingest(
            try peer.changes(of: document) + [madeUp], heads: try peer.signedHeads(of: document))
        #expect(result.applied.count == 3)
        #expect(result.unvouched == [madeUp.id])
        #expect(throws: StoreError.self) { try device.append(Fixtures.edit("too soon"), to: document) }

        #expect(try device.settleRemovedOwnChanges(of: document))
        #expect(try device.pendingChanges(of: document).isEmpty)
        #expect(try device.documentsAwaitingOwnChanges().isEmpty)
        #expect(try device.append(Fixtures.edit("again"), to: document).id.seq == 4)
        try device.checkInvariants()
    }

    /// A change that a clone of the device (its key) signed in the place of the removed head's is refused when it
    /// would complete the return: the log must hold the head's own change.
    @Test func aCloneOfTheRemovedHeadsChangeIsAnIntegrityFailure() throws {
        let directory = try TemporaryDirectory()
        let device = try directory.openStore(for: Device.named("Device"))
        let document = Fixtures.document
        try Self.write(document, edits: 4, into: device)
        let own = try device.changes(of: document)
        try device.removeLocalCopy(of: document)

        let tip = own[4]
        let clone = Change(
            document: document, id: tip.id, parents: tip.parents, vector: tip.vector, lamport: tip.lamport,
            wallTime: tip.wallTime, kind: Fixtures.edit("the clone's"))
        #expect(clone.hash != tip.hash)
        let cloneHead = SignedHead(signing: clone, with: DeviceKey.named("Device"))
        let failure = #expect(throws: StoreError.self) {
            try device.ingest(Array(own.prefix(4)) + [clone], heads: [cloneHead])
        }
        #expect(failure?.code == .integrity)
        #expect(try device.changes(of: document).isEmpty)
        // The device's own changes still come back.
        try device.ingest(own, heads: [])
        #expect(try device.changes(of: document) == own)
        #expect(try device.documentsAwaitingOwnChanges().isEmpty)
    }

    /// A store with shared access sees a removal made through another store of the same file: it makes no change
    /// in the removed document until the device's changes are back.
    @Test func anotherStoreOfTheFileSeesTheRemoval() throws {
        let directory = try TemporaryDirectory()
        let first = try directory.openStore(for: Device.named("Device"))
        let second = try directory.openStore(for: Device.named("Device"))
        let document = Fixtures.document
        try Self.write(document, edits: 1, into: first)
        try first.removeLocalCopy(of: document)
        let refused = #expect(throws: StoreError.self) { try second.append(Fixtures.edit("reused"), to: document) }
        #expect(refused?.code == .invalidChange)
        #expect(try second.documentsAwaitingOwnChanges() == [document])
    }

    /// The heads a removal keeps have a table of their own, made by the first removal that keeps one: a store that
    /// never removes a local copy pays no page of its file for it, and a store of the file opened before the table
    /// was made reads it once it is.
    @Test func theTableOfRemovedHeadsComesWithTheFirstRemoval() throws {
        let directory = try TemporaryDirectory()
        let first = try directory.openStore(for: Device.named("Device"))
        let second = try directory.openStore(for: Device.named("Device"))
        let document = Fixtures.document
        try Self.write(document, edits: 2, into: first)
        func tableExists(in store: ChangeLogStore) throws -> Bool {
            try store.read("reading the schema") { db in try RemovedOwnHeadTable.exists(in: db) }
        }
        #expect(try !tableExists(in: first))
        #expect(try second.documentsAwaitingOwnChanges().isEmpty)
        try first.removeLocalCopy(of: document)
        #expect(try tableExists(in: second))
        #expect(try second.documentsAwaitingOwnChanges() == [document])
        #expect(try first.documentsAwaitingOwnChanges() == [document])
    }

    /// A document kept to this device is gone whole: nothing waits for its changes, and it starts afresh.
    @Test func anUnpublishedDocumentLeavesNothingToWaitFor() throws {
        let directory = try TemporaryDirectory()
        let device = try directory.openStore(for: Device.named("Device"), access: .exclusive)
        let document = Fixtures.document
        try Self.write(document, edits: 0, into: device, in: .local)
        try device.unpublished.set(true, document)
        try device.removeLocalCopy(of: document)
        #expect(try device.documentsAwaitingOwnChanges().isEmpty)
        #expect(try device.append(Fixtures.edit("anew"), to: document).id.seq == 1)
    }

    /// Writes `document` into `store`: its creation in `container`, then `edits` edits of its own.
    private static func write(
        _ document: DocumentID, edits: Int, into store: ChangeLogStore, in container: DocumentContainer = .shared
    ) throws {
        try store.append(
            .lifecycle(.create(name: "Doc", type: "public.plain-text", container: container)), to: document)
        for index in 0..<edits { try store.append(Fixtures.edit("own \(index)"), to: document) }
    }
}
