import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A head vouches for its device's changes below its own change; when that change must wait (a parent of another
/// device is missing), the changes below it wait with it: a store never logs a change that no head it keeps
/// reaches, so whatever it passes on is vouched for by what it passes on.
@Suite(.workPool) struct WaitingHeadTests {
    let directory: TemporaryDirectory
    let d = Device.named("D"), e = Device.named("E"), r = Device.named("R"), t = Device.named("T")
    let document = Fixtures.document

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// D's x1, E's y1 (which D gets), and D's h2 on both; with D's head of h2.
    private func history() throws -> (x1: Change, y1: Change, h2: Change, head: SignedHead, yHeads: [SignedHead]) {
        let storeD = try directory.openStore(for: d)
        let storeE = try directory.openStore(for: e)
        let x1 = try storeD.append(Fixtures.edit("x1"), to: document)
        let y1 = try storeE.append(Fixtures.edit("y1"), to: document)
        try storeE.send(document, to: storeD)
        let h2 = try storeD.append(Fixtures.edit("h2"), to: document)
        #expect(h2.parents.contains(x1.hash) && h2.parents.contains(y1.hash))
        let head = try #require(storeD.signedHead(for: h2))
        return (x1, y1, h2, head, try storeE.signedHeads(of: document))
    }

    /// What a third device gets when it asks `source` for what it has (as the server answers a request).
    @discardableResult
    private func ask(_ source: ChangeLogStore, into target: ChangeLogStore) throws -> IngestResult {
        let since = try target.vector(of: document)
        let changes = try source.changes(of: document, since: since)
        let heads = try source.signedHeads(of: document, since: since, signingOwn: false)
        let result = try target.ingest(changes, heads: heads)
        try target.checkInvariants()
        return result
    }

    @Test func aChangeVouchedThroughAWaitingHeadWaitsWithItAndEntersWithIt() throws {
        let (x1, y1, h2, head, yHeads) = try history()
        let receiver = try directory.openStore(for: r)
        let third = try directory.openStore(for: t)

        let first = try receiver.ingest([x1, h2], heads: [head])
        #expect(first.applied.isEmpty, "x1 is vouched only through h2, which waits for y1: it waits with it")
        #expect(first.unvouched.isEmpty)
        #expect(try receiver.vector(of: document)[d.id] == 0)
        try receiver.checkInvariants()

        // Whatever the receiver passes on, the heads it passes on vouch for.
        let passed = try ask(receiver, into: third)
        #expect(passed.unvouched.isEmpty)
        #expect(try third.vector(of: document) == receiver.vector(of: document))

        // y1 arrives: x1 and h2 enter together, and h2's head is kept for both.
        let second = try receiver.ingest([y1], heads: yHeads)
        #expect(Set(second.applied) == [x1.id, y1.id, h2.id])
        #expect(try receiver.signedHeads(of: document, signingOwn: false).contains(head))
        try receiver.checkInvariants()
        let relayed = try ask(receiver, into: third)
        #expect(relayed.unvouched.isEmpty)
        #expect(Set(relayed.applied) == [x1.id, y1.id, h2.id])
        #expect(try third.vector(of: document) == receiver.vector(of: document))
    }

    @Test func theWaitingSetIsReleasedInWhateverOrderItsPartsArrive() throws {
        let (x1, y1, h2, head, yHeads) = try history()
        // h2 alone, then x1 with h2's head, then y1.
        let receiver = try directory.openStore(for: r)
        #expect(try receiver.ingest([h2], heads: [head]).deferred == 1)
        #expect(try receiver.ingest([x1], heads: [head]).applied.isEmpty)
        try receiver.checkInvariants()
        #expect(Set(try receiver.ingest([y1], heads: yHeads).applied) == [x1.id, y1.id, h2.id])
        try receiver.checkInvariants()

        // Everything in one call, in any order: applied at once.
        let other = try directory.openStore(for: t)
        #expect(Set(try other.ingest([h2, y1, x1], heads: yHeads + [head]).applied) == [x1.id, y1.id, h2.id])
        try other.checkInvariants()

        // x1 and h2 held, then x1 again with the same head: it waits still, and is not counted twice.
        let again = try directory.openStore("again.sqlite", as: Device.named("U"))
        #expect(try again.ingest([x1, h2], heads: [head]).applied.isEmpty)
        #expect(try again.ingest([x1, h2], heads: [head]).applied.isEmpty)
        #expect(Set(try again.ingest([y1], heads: yHeads).applied) == [x1.id, y1.id, h2.id])
        try again.checkInvariants()
    }

    @Test func aChangeWithAHeadOfItsOwnIsNotHeldForAHigherOne() throws {
        let (x1, _, h2, head, _) = try history()
        let receiver = try directory.openStore(for: r)
        #expect(try receiver.ingest([h2], heads: [head]).deferred == 1)
        let x1Head = SignedHead(signing: x1, with: DeviceKey.named("D"))
        #expect(try receiver.ingest([x1], heads: [x1Head]).applied == [x1.id])
        #expect(try receiver.signedHeads(of: document, signingOwn: false) == [x1Head])
        let third = try directory.openStore(for: t)
        #expect(try ask(receiver, into: third).applied == [x1.id])
    }
}
