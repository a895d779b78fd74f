import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A document a store keeps unpublished stays on its device through every transport: it is not announced, not sent
/// and not taken from peers; published again, it goes out with its whole history. Other documents sync as ever.
@Suite(.workPool) struct UnpublishedDocumentTests {
    let directory: TemporaryDirectory
    static let a = Device.named("A"), b = Device.named("B")
    /// The document A keeps to itself.
    static let kept = Fixtures.document
    /// A document both share.
    static let shared = Fixtures.otherDocument

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A and B both hold `kept` (A's first change); then A unpublishes it and each edits it, and A edits `shared`.
    private func storesSharingThenKeeping() throws -> (a: ChangeLogStore, b: ChangeLogStore) {
        let storeA = try directory.openStore(for: Self.a)
        let storeB = try directory.openStore(for: Self.b)
        let first = try storeA.append(Fixtures.edit("a1"), to: Self.kept)
        try storeB.ingest(trusting: [first])
        try storeA.append([Fixtures.edit("a2 kept")], to: Self.kept, unpublished: true)
        try storeB.append(Fixtures.edit("b1"), to: Self.kept)
        try storeA.append(Fixtures.edit("a shared"), to: Self.shared)
        return (storeA, storeB)
    }

    @Test func theStoreRemembersWhatIsUnpublished() throws {
        let store = try directory.openStore(for: Self.a)
        #expect(try store.unpublished.documents().isEmpty)
        try store.append([Fixtures.edit("x")], to: Self.kept, unpublished: true)
        try store.append([Fixtures.edit("y")], to: Self.shared, unpublished: false)
        #expect(try store.unpublished.documents() == [Self.kept])
        try store.unpublished.set(true, Self.kept)
        try store.append([Fixtures.edit("z")], to: Self.kept)
        #expect(try store.unpublished.documents() == [Self.kept], "an append that says nothing leaves it")
        try store.unpublished.set(false, Self.kept)
        #expect(try store.unpublished.documents().isEmpty)
        try store.close()
        let reopened = try directory.openStore(for: Self.a)
        try reopened.unpublished.set(true, Self.shared)
        #expect(try reopened.unpublished.documents() == [Self.shared])
    }

    @Test func anUnpublishedDocumentIsNotInTheHello() throws {
        let (storeA, _) = try storesSharingThenKeeping()
        var driver = try SyncDriver(store: storeA, role: .initiator, id: 1)
        let sent = try driver.start()
        let hello = try #require(sent.first.map { try SyncMessage(decoding: $0) })
        guard case .hello(let announced) = hello else {
            Issue.record("the first message is \(hello)")
            return
        }
        #expect(announced.vectors.keys.sorted() == [Self.shared])
        #expect(announced.heads.keys.sorted() == [Self.shared])
        #expect(driver.session.unpublished == [Self.kept])
    }

    @Test func aRequestForAnUnpublishedDocumentIsAnsweredWithNothing() throws {
        let (storeA, _) = try storesSharingThenKeeping()
        var driver = try SyncDriver(store: storeA, role: .responder, id: 1)
        #expect(try driver.receive(.request(document: Self.kept, since: VersionVector())).isEmpty)
        #expect(driver.report.changesSent == 0 && driver.report.messagesSent == 0)
        // The other document is answered as ever.
        let answer = try driver.receive(.request(document: Self.shared, since: VersionVector()))
        #expect(answer.count == 1 && driver.report.changesSent == 1)
    }

    @Test func pushedChangesOfAnUnpublishedDocumentAreNotIngested() throws {
        let (storeA, storeB) = try storesSharingThenKeeping()
        let pushed = try storeB.changes(of: Self.kept, since: storeA.vector(of: Self.kept))
        let message = SyncMessage.changes(
            document: Self.kept, changes: pushed.map(EncodedChange.init),
            heads: [SignedHead(signing: pushed.last!, with: DeviceKey.known(Self.b.id)!)])
        let before = try storeA.vector(of: Self.kept)
        var driver = try SyncDriver(store: storeA, role: .initiator, id: 1)
        #expect(try driver.receive(message).isEmpty)
        #expect(try driver.receive(batch: [message.encoded(), message.encoded()]).isEmpty)
        #expect(try storeA.vector(of: Self.kept) == before)
        #expect(try storeA.pendingChanges(of: Self.kept).isEmpty)
        #expect(driver.report.changesApplied == 0)
    }

    @Test func theInMemoryHubNeitherSendsNorTakesAnUnpublishedDocument() throws {
        let (storeA, storeB) = try storesSharingThenKeeping()
        let keptOnA = try storeA.vector(of: Self.kept)
        let keptOnB = try storeB.vector(of: Self.kept)
        // Either side may open the exchange; it completes without the kept document.
        for (index, pair) in [(storeA, storeB), (storeB, storeA)].enumerated() {
            let exchange = try InMemoryHub(seed: UInt64(10 + index)).sync(pair.0, with: pair.1)
            #expect(exchange.isComplete && exchange.responder.isComplete)
            #expect(try storeA.vector(of: Self.kept) == keptOnA, "B's edit of it stays off A")
            #expect(try storeB.vector(of: Self.kept) == keptOnB, "A's edit of it stays on A")
            #expect(try storeB.vector(of: Self.shared) == storeA.vector(of: Self.shared), "other documents sync")
        }

        // Published again, it goes out with everything A made meanwhile, and A takes what B made.
        try storeA.unpublished.set(false, Self.kept)
        let exchange = try InMemoryHub(seed: 12).sync(storeA, with: storeB)
        #expect(exchange.isComplete)
        try Convergence.expectConverged([storeA, storeB])
        #expect(try storeB.vector(of: Self.kept)[Self.a.id] == 2)
        #expect(try storeA.vector(of: Self.kept)[Self.b.id] == 1)
    }

    @Test func aDocumentNeverSeenStillArrives() throws {
        let (storeA, storeB) = try storesSharingThenKeeping()
        try storeB.append(Fixtures.edit("new on B"), to: Fixtures.thirdDocument)
        try InMemoryHub(seed: 13).sync(storeA, with: storeB)
        #expect(try storeA.vector(of: Fixtures.thirdDocument)[Self.b.id] == 1)
    }

    @Test func theFolderNeitherGetsNorGivesAnUnpublishedDocument() throws {
        let (storeA, storeB) = try storesSharingThenKeeping()
        let folder = try TemporaryDirectory()
        let transport = FolderTransport(root: folder.url)
        let keptOnA = try storeA.vector(of: Self.kept)
        try transport.sync(storeA)
        try transport.sync(storeB)
        try transport.sync(storeA)
        let ownDirectory = folder.url.appendingPathComponent(Self.a.id.description)
        let written = try FileManager.default.contentsOfDirectory(atPath: ownDirectory.path)
        #expect(written == [Self.shared.description], "nothing of the kept document is written")
        #expect(try storeA.vector(of: Self.kept) == keptOnA, "B's files of it are not read")
        #expect(try storeB.vector(of: Self.kept)[Self.a.id] == 1)
        #expect(try storeB.vector(of: Self.shared) == storeA.vector(of: Self.shared), "other documents sync")

        // Published again: its whole history goes out, and B's files of it, passed over until now, are read.
        try storeA.unpublished.set(false, Self.kept)
        try transport.sync(storeA)
        try transport.sync(storeB)
        try Convergence.expectConverged([storeA, storeB])
    }
}
