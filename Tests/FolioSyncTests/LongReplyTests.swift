import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A reply longer than one message reaches a peer that lets few changes wait: each message carries a head near its
/// own changes, so a message's changes wait at most until the next message, never for the whole reply.
@Suite(.workPool) struct LongReplyTests {
    let directory: TemporaryDirectory
    static let a = Device.named("A"), b = Device.named("B"), c = Device.named("C")
    /// Messages of 25 changes; peers that let 400 changes wait, 300 of them for a head: a reply of 600 changes
    /// cannot wait whole for the head of its last message. (A store keeps a head of each device per 512 changes of
    /// the history.)
    static let limits = SyncSession.Limits(changesPerMessage: 25)
    static let cramped = StoreLimits(waitingChangesPerDocument: 400, unvouchedChangesPerDocument: 300)

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func store(_ device: Device, limits: StoreLimits = StoreLimits()) throws -> ChangeLogStore {
        try ChangeLogStore(
            at: directory.file("\(device.name).sqlite"), device: device, clock: ManualClock(start: Fixtures.start),
            limits: limits)
    }

    @Test func aLongReplyOfOwnAndRelayedChangesReachesACrampedPeer() throws {
        let storeA = try store(Self.a)
        let storeB = try store(Self.b, limits: Self.cramped)
        let storeC = try store(Self.c, limits: Self.cramped)
        try storeA.append((1...600).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)

        // A's own changes: every message signed at its last change of A's.
        let first = try InMemoryHub(seed: 1, limits: Self.limits).sync(storeB, with: storeA)
        #expect(first.isComplete)
        #expect(try storeB.vector(of: Fixtures.document)[Self.a.id] == 600)
        // B relays them with the heads it kept, one per message that brought them.
        try storeB.append(Fixtures.edit("b1"), to: Fixtures.document)
        let relayed = try InMemoryHub(seed: 2, limits: Self.limits).sync(storeC, with: storeB)
        #expect(relayed.isComplete)
        try Convergence.expectConverged([storeB, storeC])
        try storeC.checkInvariants()
        #expect(
            try storeC.signedHeads(of: Fixtures.document).filter { $0.change.device == Self.a.id }.map(\.change.seq)
                == [500, 600])
    }

    /// The relay's heads are where the batches that brought them ended; the peer asks from elsewhere, so the
    /// relay's messages end between heads, and each carries the highest head among its own changes.
    @Test func relayedMessagesThatEndBetweenHeadsStillGoThrough() throws {
        let storeA = try store(Self.a)
        let storeB = try store(Self.b)
        let storeC = try store(Self.c, limits: Self.cramped)
        let changes = try storeA.append((1...600).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        #expect(try InMemoryHub(seed: 4, limits: Self.limits).sync(storeB, with: storeA).isComplete)
        // C already has A's first ten changes: B's messages to it start at 11 and end at 35, 60, 85…
        try storeC.ingest(
            Array(changes.prefix(10)), heads: [SignedHead(signing: changes[9], with: DeviceKey.known(Self.a.id)!)])
        let relayed = try InMemoryHub(seed: 5, limits: Self.limits).sync(storeC, with: storeB)
        #expect(relayed.isComplete)
        try Convergence.expectConverged([storeB, storeC])
        try storeC.checkInvariants()
    }

    @Test func eachMessageCarriesTheHeadThatReachesItsChangesSoonest() throws {
        let storeA = try store(Self.a)
        let storeB = try store(Self.b)
        try storeA.append((1...1_000).map { Fixtures.edit("a\($0)") }, to: Fixtures.document)
        _ = try InMemoryHub(seed: 3, limits: Self.limits).sync(storeB, with: storeA)
        let changes = try storeB.changes(of: Fixtures.document).map(EncodedChange.init)
        let heads = try storeB.signedHeads(of: Fixtures.document)
        var session = SyncSession(
            device: Self.b, id: 1, role: .responder, vectors: [:], limits: SyncSession.Limits(changesPerMessage: 100))
        let kept = heads.map(\.change.seq)
        #expect(kept == [500, 1_000], "the latest head of each span of 512")
        let messages = session.fetched(changes, heads: heads, of: Fixtures.document).compactMap {
            action -> (ClosedRange<UInt64>, [SignedHead])? in
            guard case .send(.changes(_, let batch, let heads)) = action else { return nil }
            return (batch.first!.change.id.seq...batch.last!.change.id.seq, heads)
        }
        #expect(messages.count == 10)
        for (range, heads) in messages {
            // The highest head among the message's changes, else the lowest above them.
            let expected = kept.filter { range.contains($0) }.max() ?? kept.filter { $0 > range.upperBound }.min()
            #expect(heads.map(\.change.seq) == [expected!], "message \(range)")
        }
    }
}
