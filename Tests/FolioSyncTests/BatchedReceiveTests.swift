import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// `SyncDriver.receive(batch:)` answers and ends as receiving the messages one by one would, with the changes of
/// consecutive `changes` messages ingested in one transaction.
@Suite(.workPool) struct BatchedReceiveTests {
    let directory: TemporaryDirectory
    static let sender = Device.named("Sender"), receiver = Device.named("Receiver")
    static let documents = [Fixtures.document, Fixtures.otherDocument, Fixtures.thirdDocument]

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A store named `name` holding the same changes as every other store made by this function with the same
    /// `edits`: `edits` changes per document, made as `device`.
    private func store(_ name: String, as device: Device, edits: Int) throws -> ChangeLogStore {
        let store = try ChangeLogStore(
            at: directory.file("\(name).sqlite"), device: device, clock: ManualClock(start: Fixtures.start),
            access: .exclusive)
        for document in Self.documents where edits > 0 {
            try store.append((1...edits).map { Fixtures.edit("\(device.name) \(document) \($0)") }, to: document)
        }
        return store
    }

    /// What one exchange did: every message sent, in order, and both reports.
    struct Transcript: Equatable {
        var sent: [[UInt8]] = []
        var initiator = SyncReport()
        var responder = SyncReport()
        /// Deliveries of more than one message at once.
        var batches = 0
    }

    /// Runs an exchange over a reliable first-in first-out pipe; with `batched`, consecutive messages to the same
    /// side are handed over together.
    private func exchange(_ initiator: ChangeLogStore, _ responder: ChangeLogStore, batched: Bool) throws -> Transcript
    {
        let limits = SyncSession.Limits(changesPerMessage: 2)
        var first = try SyncDriver(store: initiator, role: .initiator, id: 11, limits: limits)
        var second = try SyncDriver(store: responder, role: .responder, id: 22, limits: limits)
        var transcript = Transcript()
        var queue: [(toResponder: Bool, bytes: [UInt8])] = []
        func send(_ messages: [[UInt8]], toResponder: Bool) {
            transcript.sent += messages
            queue += messages.map { (toResponder, $0) }
        }
        send(try first.start(), toResponder: true)
        while !first.isFinished, let next = queue.first {
            let count = batched ? queue.prefix { $0.toResponder == next.toResponder }.count : 1
            let delivered = queue.prefix(count).map(\.bytes)
            queue.removeFirst(count)
            if count > 1 { transcript.batches += 1 }
            if next.toResponder {
                send(try second.receive(batch: delivered), toResponder: false)
            } else {
                send(try first.receive(batch: delivered), toResponder: true)
            }
        }
        transcript.initiator = first.report
        transcript.responder = second.report
        return transcript
    }

    @Test func aBatchAnswersAndEndsAsOneByOne() throws {
        let oneByOneReceiver = try store("receiver-1", as: Self.receiver, edits: 2)
        let oneByOne = try exchange(oneByOneReceiver, try store("sender-1", as: Self.sender, edits: 5), batched: false)
        let batchedReceiver = try store("receiver-2", as: Self.receiver, edits: 2)
        let batchedSender = try store("sender-2", as: Self.sender, edits: 5)
        let batched = try exchange(batchedReceiver, batchedSender, batched: true)

        #expect(batched.batches > 0, "the exchange delivered several changes messages at once")
        #expect(batched.sent == oneByOne.sent, "the same messages, in the same order")
        #expect(batched.initiator == oneByOne.initiator, "\(batched.initiator) vs \(oneByOne.initiator)")
        #expect(batched.responder == oneByOne.responder, "\(batched.responder) vs \(oneByOne.responder)")
        #expect(batched.initiator.changesApplied == 15 && batched.initiator.updatedDocuments == Self.documents.sorted())
        try Convergence.expectConverged([batchedReceiver, oneByOneReceiver, batchedSender])
    }

    @Test func aFailingBatchKeepsWhatCameBeforeTheFailure() throws {
        // The receiver holds the sender's first change of the third document; the peer's log has another change
        // under that identity (a clone of the sender), which the second message brings.
        let receiver = try store("receiver", as: Self.receiver, edits: 0)
        let sender = try store("sender", as: Self.sender, edits: 0)
        let clone = try store("clone", as: Self.sender, edits: 0)
        try receiver.ingest(trusting: [try sender.append(Fixtures.edit("the sender's"), to: Fixtures.thirdDocument)])
        let good = try clone.append([Fixtures.edit("one"), Fixtures.edit("two")], to: Fixtures.document)
        let reused = try clone.append(Fixtures.edit("the clone's"), to: Fixtures.thirdDocument)
        let messages = [
            SyncMessage.changes(
                document: Fixtures.document, changes: good.map(EncodedChange.init),
                heads: [SignedHead(signing: good[1], with: DeviceKey.known(Self.sender.id)!)]
            ).encoded(),
            SyncMessage.changes(
                document: Fixtures.thirdDocument, changes: [EncodedChange(reused)],
                heads: [SignedHead(signing: reused, with: DeviceKey.known(Self.sender.id)!)]
            ).encoded(),
        ]

        var driver = try SyncDriver(store: receiver, role: .initiator, id: 1)
        #expect(throws: SyncError.self) { _ = try driver.receive(batch: messages) }
        #expect(
            try receiver.changes(of: Fixtures.document).map(\.hash) == good.map(\.hash),
            "the first message's changes stay")
        #expect(try receiver.changes(of: Fixtures.thirdDocument).map(\.kind) == [Fixtures.edit("the sender's")])
        try receiver.checkInvariants()
    }
}
