import Folio
import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Message format 3 through a real `folio serve`: a client that offers it receives (and sends) changes as compact
/// runs, a client that knows only format 2 still syncs with the same server, and a run that does not decode, names
/// changes the server lacks, declares sizes past its bounds or does not match its signed heads is refused with its
/// close code and leaves nothing in the log.
@Suite(.serialized) struct ChangeRunSyncTests {
    let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xCD, count: 16)))

    /// A shared note with `edits` appended lines, each its own change.
    private func note(on library: DocumentLibrary, edits: Int, prefix: String) async throws -> DocumentID {
        let note = try await library.create(TextDocument.self, named: "Runs", in: .shared)
        for index in 0..<edits { try await note.edit([.append("\(prefix) \(index)\n")]) }
        try await note.save()
        return note.id
    }

    @Test func aNewClientReceivesRunsAndAnOldClientStillSyncs() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let runs = WebSocketTransport(endpoint: endpoint)
        let plain = WebSocketTransport(endpoint: endpoint, formats: .plain)

        // A new client uploads: the server asks for its changes and the client answers with runs.
        let phone = try fixture.library("Phone")
        let id = try await note(on: phone, edits: 120, prefix: "phone")
        let uploaded = try await phone.sync(through: runs)
        #expect(uploaded.isComplete)
        #expect(uploaded.runsSent > 0, "the new client sent no run: \(uploaded)")

        // An old client catches up in format 2, then uploads its own edits in format 2.
        let laptop = try fixture.library("Laptop")
        let before = try await fixture.metric("folio_bytes_out_total") ?? 0
        let old = try await laptop.sync(through: plain)
        let plainBytes = try await fixture.metric("folio_bytes_out_total")! - before
        #expect(old.isComplete && old.runsReceived == 0 && old.runsSent == 0)
        let copy = try await laptop.open(id, as: TextDocument.self)
        #expect(await copy.model.text.hasPrefix("phone 0\nphone 1\n"))
        for index in 0..<30 { try await copy.edit([.append("laptop \(index)\n")]) }
        try await copy.save()
        let pushed = try await laptop.sync(through: plain)
        #expect(pushed.isComplete && pushed.runsSent == 0)
        let expected = await copy.model.text

        // A new client catches up on both devices' changes as runs, in fewer bytes than format 2 took for less.
        let tablet = try fixture.library("Tablet")
        let start = try await fixture.metric("folio_bytes_out_total") ?? 0
        let caughtUp = try await tablet.sync(through: runs)
        let runBytes = try await fixture.metric("folio_bytes_out_total")! - start
        #expect(caughtUp.isComplete)
        #expect(caughtUp.runsReceived > 0, "the new client received no run: \(caughtUp)")
        #expect(runBytes < plainBytes, "runs took \(runBytes) bytes, format 2 \(plainBytes) for fewer changes")
        #expect(await (try tablet.open(id, as: TextDocument.self)).model.text == expected)

        // The new client that uploaded first catches up on the old client's changes as runs too.
        let again = try await phone.sync(through: runs)
        #expect(again.isComplete && again.runsReceived > 0)
        #expect(await (try phone.open(id, as: TextDocument.self)).model.text == expected)
        // And the old client hears of nothing it cannot read.
        let quiet = try await laptop.sync(through: plain)
        #expect(quiet.isComplete && quiet.messagesRejected == 0, "\(quiet.problems)")
    }

    /// A server with a library `notes`, its token, and a device that sends what it is given.
    final class Context {
        let fixture: ServerFixture
        let token: String
        let hand = HandDevice()

        init() async throws {
            fixture = try await ServerFixture.start(arguments: ["--hello-timeout", "120"])
            token = try await fixture.token(for: "notes")
        }

        func client() -> RawClient { RawClient(fixture.server.libraryURL("notes"), token: token) }

        /// What the server's log holds of `document`, as a device syncing now receives it.
        func storedVector(of document: DocumentID) async throws -> VersionVector {
            let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
            let store = try ChangeLogStore(inMemoryNamed: "probe-\(UUID())", key: DeviceKey(), deviceName: "probe")
            _ = try await WebSocketTransport(endpoint: endpoint).sync(store)
            return try store.vector(of: document)
        }
    }

    /// Three changes of the hand device, each on the one before: the document's creation, then two edits of its
    /// text.
    private func chain(_ hand: HandDevice, texts: [String] = ["two", "three"]) -> [Change] {
        var changes = [hand.change(seq: 1, of: document, lamport: 1, text: "Runs")]
        for (index, text) in texts.enumerated() {
            let parent = changes[changes.count - 1]
            var vector = parent.vector
            vector[hand.key.id] = UInt64(index + 2)
            changes.append(
                Change(
                    document: document, id: ChangeID(device: hand.key.id, seq: UInt64(index + 2)),
                    parents: [parent.hash], vector: vector, lamport: UInt64(index + 2),
                    wallTime: Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(index)),
                    kind: .edit(Edit(operations: TextDocument.Operation.encodeGroup([.append(text)])))))
        }
        return changes
    }

    /// Sends the hand device's hello, its first change as a plain `changes` message (stored), then `frame`; returns
    /// the outcome and what the log holds of the document afterwards.
    private func refused(
        _ frame: [UInt8], in context: Context, first: Change, linger: Duration = .seconds(60)
    ) async throws -> (outcome: RawClient.Outcome, stored: VersionVector) {
        let outcome = try await context.client().run(
            [.binary(context.hand.hello()), .binary(context.hand.changes([first], of: document)), .binary(frame)],
            linger: linger)
        return (outcome, try await context.storedVector(of: document))
    }

    @Test func aTruncatedRunCloses1002AndNothingOfItIsStored() async throws {
        let context = try await Context()
        let changes = chain(context.hand)
        let run = try context.hand.runMessage(Array(changes.dropFirst()), of: document, outside: [changes[0]])
        let frame = context.hand.runFrame(bytes: Array(run.bytes.dropLast(6)), of: document)
        let (outcome, stored) = try await refused(frame, in: context, first: changes[0])
        #expect(outcome.closeCode == 1002, "\(outcome.reason ?? "")")
        #expect(outcome.reason?.contains("run") == true, "\(outcome.reason ?? "")")
        #expect(stored[context.hand.key.id] == 1)
    }

    @Test func aRunNamingAChangeTheServerLacksCloses1002() async throws {
        let context = try await Context()
        let changes = chain(context.hand)
        // The run's first change names the second, which never reached the server.
        let run = try context.hand.runMessage([changes[2]], of: document, outside: [changes[1]])
        let (outcome, stored) = try await refused(context.hand.frame(run), in: context, first: changes[0])
        #expect(outcome.closeCode == 1002, "\(outcome.reason ?? "")")
        #expect(outcome.reason?.contains("names parent") == true, "\(outcome.reason ?? "")")
        #expect(stored[context.hand.key.id] == 1)
    }

    @Test(arguments: [
        ("a change count past the limit", UInt64(SyncMessage.Limits.runChanges + 1), UInt64(1 << 20)),
        ("columns past the limit", UInt64(1), UInt64(SyncMessage.Limits.runColumnBytes + 1)),
        ("a decoded bound past the limit", UInt64(SyncMessage.Limits.runChanges), UInt64(16 << 20)),
    ])
    func aRunDeclaringSizesPastItsBoundsCloses1002(_ what: String, count: UInt64, columns: UInt64) async throws {
        let context = try await Context()
        let changes = chain(context.hand)
        // What the run declares, then a few bytes that are not the columns it declares: never inflated.
        var writer = BinaryWriter(capacity: 64)
        writer.write(byte: ChangeRunCodec.formatVersion)
        writer.write(varint: count)
        writer.write(varint: 1)
        writer.write(fixed: context.hand.key.id.uuid.high)
        writer.write(fixed: context.hand.key.id.uuid.low)
        writer.write(varint: columns)
        writer.write(raw: [0x78, 0x9C, 0x03, 0x00])
        let frame = context.hand.runFrame(bytes: writer.bytes, of: document)
        let (outcome, stored) = try await refused(frame, in: context, first: changes[0])
        #expect(outcome.closeCode == 1002, "\(what): \(outcome.reason ?? "")")
        #expect(stored[context.hand.key.id] == 1, "\(what)")
    }

    /// A run whose changes are not those its head signed (the second change's text changed, and so every hash from
    /// it on) is treated as the same changes sent plainly are: the head vouches for none of them, so the log takes
    /// none (they wait unvouched, within their bounds), and the connection fares the same (it stays open).
    @Test func aRunWhoseHashesAreNotThoseItsHeadSignedIsTreatedAsPlainChangesAre() async throws {
        let context = try await Context()
        let hand = context.hand
        let honest = chain(hand)
        let forged = chain(hand, texts: ["forged", "three"])
        let head = SignedHead(signing: honest[2], with: hand.key)
        let run = try hand.runMessage(Array(forged.dropFirst()), of: document, heads: [head], outside: [forged[0]])
        let (viaRun, storedAfterRun) = try await refused(
            hand.frame(run), in: context, first: honest[0], linger: .seconds(3))
        let plain = SyncFrame.encode(
            .changes(document: document, changes: forged.dropFirst().map(EncodedChange.init), heads: [head]),
            on: hand.channel)
        let (viaPlain, storedAfterPlain) = try await refused(plain, in: context, first: honest[0], linger: .seconds(3))
        #expect(viaRun.closeCode == viaPlain.closeCode, "\(viaRun.reason ?? "") / \(viaPlain.reason ?? "")")
        #expect(storedAfterRun[hand.key.id] == 1 && storedAfterPlain[hand.key.id] == 1)
    }

    @Test func aRunBeforeAHelloOrInFormat2Closes1002() async throws {
        let context = try await Context()
        let changes = chain(context.hand)
        let run = try context.hand.runMessage(changes, of: document)
        let early = try await context.client().run([.binary(context.hand.frame(run))])
        #expect(early.closeCode == 1002 && early.reason?.contains("before a hello") == true, "\(early.reason ?? "")")
        // The same message with format 2's version byte: format 2 has no runs.
        var message = SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion)
        message[0] = SyncMessage.formatVersion
        let frame = SyncFrame.message(channel: context.hand.channel, bytes: message).encoded()
        let (outcome, stored) = try await refused(frame, in: context, first: changes[0])
        #expect(outcome.closeCode == 1002, "\(outcome.reason ?? "")")
        #expect(stored[context.hand.key.id] == 1)
    }

    /// An honest run from a hand device is stored whole, and a device that offers runs receives it back as one.
    @Test func anHonestRunIsStoredAndServedAsRuns() async throws {
        let context = try await Context()
        let changes = chain(context.hand)
        let run = try context.hand.runMessage(Array(changes.dropFirst()), of: document, outside: [changes[0]])
        let outcome = try await context.client().run(
            [
                .binary(context.hand.hello()), .binary(context.hand.changes([changes[0]], of: document)),
                .binary(context.hand.frame(run)),
            ], linger: .seconds(2))
        #expect(outcome.closeCode == nil, "\(outcome.reason ?? "")")
        try await eventually("the run to be stored") {
            try await context.storedVector(of: document)[context.hand.key.id] == 3
        }
    }
}

extension HandDevice {
    /// A run of `changes` (their parents outside the run among `outside`), vouched for by `heads` (by default a head
    /// this device signs for the last change).
    func runMessage(
        _ changes: [Change], of document: DocumentID, heads: [SignedHead]? = nil, outside: [Change] = []
    ) throws -> ChangeRunMessage {
        let stamps = Dictionary(uniqueKeysWithValues: outside.map { ($0.hash, ChangeStamp($0)) })
        let signed = heads ?? changes.suffix(1).map { SignedHead(signing: $0, with: key) }
        return try ChangeRunMessage(encoding: changes, of: document, heads: signed, outside: { stamps[$0] })
    }

    /// The frame of a run message in format 3.
    func frame(_ run: ChangeRunMessage) -> [UInt8] {
        SyncFrame.message(channel: channel, bytes: SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion))
            .encoded()
    }

    /// The frame of a format-3 run message holding `bytes` as its run, whatever they are, and no heads.
    func runFrame(bytes: [UInt8], of document: DocumentID) -> [UInt8] {
        var writer = BinaryWriter(capacity: bytes.count + 32)
        writer.write(byte: SyncMessage.runFormatVersion)
        writer.write(byte: 4)
        writer.write(fixed: document.uuid.high)
        writer.write(fixed: document.uuid.low)
        writer.write(lengthPrefixed: bytes)
        writer.write(varint: 0)
        return SyncFrame.message(channel: channel, bytes: writer.bytes).encoded()
    }
}
