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

/// A client that sends what the protocol does not allow is closed with a WebSocket close code and a reason; the
/// server stores nothing of it, and other devices go on syncing. One test at a time: several send tens of MiB.
@Suite(.serialized) struct HostileClientTests {
    let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xAB, count: 16)))

    /// A server with a library `notes`, and its token.
    final class Context {
        let fixture: ServerFixture
        let token: String

        init() async throws {
            // A hostile client's first frame must reach the library's checks, not the hello timeout, however loaded
            // the machine running the suite is.
            fixture = try await ServerFixture.start(arguments: ["--hello-timeout", "120"])
            token = try await fixture.token(for: "notes")
        }

        func client() -> RawClient { RawClient(fixture.server.libraryURL("notes"), token: token) }
    }

    /// After the hostile client, an honest device still syncs both ways.
    private func anHonestDeviceStillSyncs(_ context: Context) async throws {
        let fixture = context.fixture
        let token = context.token
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let phone = try fixture.library("Phone-\(UUID().uuidString.prefix(8))")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("honest\n")])
        let report = try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(report.isComplete)
        let laptop = try fixture.library("Laptop-\(UUID().uuidString.prefix(8))")
        try await laptop.sync(through: WebSocketTransport(endpoint: endpoint))
        let copy = try await laptop.open(note.id, as: TextDocument.self)
        #expect(await copy.model.text == "honest\n")
    }

    /// `count` shared documents on `library`, each a text of 1 MiB (one change besides its creation).
    private func megabyteDocuments(_ count: Int, on library: DocumentLibrary) async throws -> [DocumentID] {
        let megabyte = TextDocument.Operation.encodeGroup([.append(String(repeating: "x", count: 1 << 20))])
        var documents: [DocumentID] = []
        for number in 0..<count {
            let note = try await library.create(TextDocument.self, named: "Big \(number)", in: .shared)
            try library.store.append(.edit(Edit(operations: megabyte)), to: note.id)
            documents.append(note.id)
        }
        return documents
    }

    /// `count` shared documents on `library`, each a text of 1 MiB of random letters, which no compression shrinks
    /// much (one change besides its creation).
    private func randomMegabyteDocuments(_ count: Int, on library: DocumentLibrary) async throws -> [DocumentID] {
        var random = SplitMix64(seed: 38)
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var documents: [DocumentID] = []
        for number in 0..<count {
            let text = String((0..<(1 << 20)).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
            let note = try await library.create(TextDocument.self, named: "Random \(number)", in: .shared)
            let operations = TextDocument.Operation.encodeGroup([.append(text)])
            try library.store.append(.edit(Edit(operations: operations)), to: note.id)
            documents.append(note.id)
        }
        return documents
    }

    @Test func bytesThatAreNotAFrameClose1002() async throws {
        let context = try await Context()
        let outcome = try await context.client().run([.binary([0xFF, 0x00, 0x13, 0x37])])
        #expect(outcome.closeCode == 1002)
        #expect(outcome.reason?.contains("does not decode") == true, "\(outcome.reason ?? "")")
        try await anHonestDeviceStillSyncs(context)
    }

    @Test func aTruncatedMessageCloses1002() async throws {
        let context = try await Context()
        let hello = HandDevice().hello()
        let outcome = try await context.client().run([.binary(Array(hello.prefix(hello.count - 5)))])
        #expect(outcome.closeCode == 1002)
        try await anHonestDeviceStillSyncs(context)
    }

    @Test func anUnknownWireVersionCloses1002() async throws {
        let context = try await Context()
        var hello = HandDevice().hello()
        hello[0] = 99
        let outcome = try await context.client().run([.binary(hello)])
        #expect(outcome.closeCode == 1002)
        #expect(outcome.reason?.contains("wire version 99") == true, "\(outcome.reason ?? "")")
    }

    @Test func aTextFrameCloses1003() async throws {
        let context = try await Context()
        let outcome = try await context.client().run([.text("hello")])
        #expect(outcome.closeCode == 1003)
        try await anHonestDeviceStillSyncs(context)
    }

    @Test func anOversizedMessageCloses1009() async throws {
        let context = try await Context()
        let outcome = try await context.client().run([.binary(Array(repeating: 1, count: (16 << 20) + 1))])
        #expect(outcome.closeCode == 1009)
        try await anHonestDeviceStillSyncs(context)
    }

    @Test func changesBeforeAHelloClose1002() async throws {
        let context = try await Context()
        let hand = HandDevice()
        let change = hand.change(seq: 1, of: document, lamport: 1)
        let outcome = try await context.client().run([.binary(hand.changes([change], of: document))])
        #expect(outcome.closeCode == 1002)
        #expect(outcome.reason?.contains("before a hello") == true, "\(outcome.reason ?? "")")
        try await anHonestDeviceStillSyncs(context)
    }

    @Test func aClientDoesNotSendNotices() async throws {
        let context = try await Context()
        let notice = SyncFrame.notice(document: document, vector: VersionVector()).encoded()
        let outcome = try await context.client().run([.binary(HandDevice().hello()), .binary(notice)])
        #expect(outcome.closeCode == 1002)
    }

    /// A message with a sound change and a refused one (a lamport timestamp past the limits) is refused whole: the
    /// server stores neither, passes neither on, and closes with 1008.
    @Test func aRefusedChangeClosesTheConnectionAndNothingOfItsMessageIsStored() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let token = context.token
        let hand = HandDevice()
        let first = hand.change(seq: 1, of: document, lamport: 1)
        let second = hand.change(seq: 2, of: document, parents: [first], lamport: ChangeLimits.counter)
        let outcome = try await context.client().run([
            .binary(hand.hello()), .binary(hand.changes([first, second], of: document)),
        ])
        #expect(outcome.closeCode == 1008)
        #expect(outcome.reason?.contains("refused") == true, "\(outcome.reason ?? "")")
        try await anHonestDeviceStillSyncs(context)
        // A device that syncs now gets nothing of the hostile document.
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let store = try ChangeLogStore(inMemoryNamed: "probe-\(UUID())", key: DeviceKey(), deviceName: "probe")
        _ = try await WebSocketTransport(endpoint: endpoint).sync(store)
        #expect(try store.vector(of: document).isEmpty)
    }

    /// A WebSocket upgrade without a valid token of the library is accepted and closed with 4401 or 4403, before any
    /// frame of the log.
    @Test func aRefusedUpgradeClosesWith4401Or4403() async throws {
        let context = try await Context()
        let url = context.fixture.server.libraryURL("notes")
        let none = try await RawClient(url, token: "folio_" + String(repeating: "0", count: 64)).refusedCloseCode()
        #expect(none == 4401)
        let photos = try await context.fixture.token(for: "photos")
        #expect(try await RawClient(url, token: photos).refusedCloseCode() == 4403)
    }

    /// A refused upgrade's close never rides with the upgrade's answer (a client may lose a frame read together with
    /// it): it follows the client's first frame, and reaches a client that sends nothing 1 s after the upgrade.
    @Test func aRefusedUpgradesCloseFollowsTheClientsFirstFrame() async throws {
        let context = try await Context()
        let port = context.fixture.server.port
        let token = "folio_" + String(repeating: "0", count: 64)
        let (early, afterHello, silent) = try await offThePool {
            let speaking = try RawWebSocket(port: port, library: "notes", token: token)
            defer { speaking.close() }
            #expect(speaking.upgraded, "\(speaking.answer)")
            let early = speaking.nextFrame(within: .milliseconds(300))
            _ = speaking.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
            let start = ContinuousClock.now
            let code = speaking.closeCode(within: .seconds(30))
            let afterHello = (code, ContinuousClock.now - start)

            let quiet = try RawWebSocket(port: port, library: "notes", token: token)
            defer { quiet.close() }
            let upgraded = ContinuousClock.now
            let silentCode = quiet.closeCode(within: .seconds(30))
            return (early.map(\.opcode), afterHello, (silentCode, ContinuousClock.now - upgraded))
        }
        #expect(early == nil, "a frame came before the client's first")
        #expect(afterHello.0 == 4401, "closed \(afterHello.1) after the hello")
        #expect(silent.0 == 4401)
        #expect(silent.1 >= .milliseconds(900), "a silent client was closed after \(silent.1)")
    }

    /// A refused client that only pings while the server waits for its first frame has its pings answered and is
    /// told why it is refused (4401) once the wait ends, not closed for an error of the server's.
    @Test func aRefusedClientThatOnlyPingsIsToldWhy() async throws {
        let context = try await Context()
        let port = context.fixture.server.port
        let token = "folio_" + String(repeating: "0", count: 64)
        let (pongs, code) = try await offThePool {
            let pinging = try RawWebSocket(port: port, library: "notes", token: token)
            defer { pinging.close() }
            var pongs = 0
            var code: UInt16?
            let deadline = ContinuousClock.now + .seconds(30)
            pinging: while ContinuousClock.now < deadline {
                _ = pinging.socket.send(RawWebSocket.frame(opcode: 9, Array("are you there".utf8)))
                while let frame = pinging.nextFrame(within: .milliseconds(20)) {
                    if frame.opcode == 10 { pongs += 1 }
                    if frame.opcode == 8 {
                        code = frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : 0
                        break pinging
                    }
                }
                if pinging.ended { break }
            }
            return (pongs, code)
        }
        #expect(pongs > 0, "no ping was answered")
        #expect(code == 4401)
    }

    /// A client by hand, upgraded and past its hello, whose socket holds little (16 KiB asked, which Linux doubles) and
    /// which never reads: what the server queues for it fills at a known size.
    private func deafClient(of fixture: ServerFixture, token: String, hello: [UInt8]) async throws -> RawWebSocket {
        let port = fixture.server.port
        let client = try await offThePool {
            try RawWebSocket(port: port, library: "notes", token: token, receiveBuffer: 16 << 10)
        }
        #expect(client.upgraded)
        _ = client.socket.send(RawWebSocket.frame(opcode: 2, hello))
        return client
    }

    /// Sends `client`'s requests (as `hand`'s session) for the whole history of each of `documents`.
    private func ask(_ client: RawWebSocket, as hand: HandDevice, for documents: [DocumentID]) {
        for document in documents {
            let request = SyncFrame.encode(.request(document: document, since: VersionVector()), on: hand.channel)
            _ = client.socket.send(RawWebSocket.frame(opcode: 2, request))
        }
    }

    /// Everything the server logged, once it has stopped (SIGTERM).
    private func stoppedServerLog(of fixture: ServerFixture) async throws -> String {
        let server = fixture.server
        return try await offThePool { () -> String in
            server.send(SIGTERM)
            return server.wait().errors
        }
    }

    /// A client that stops reading while the server has much to send is cut off: the server asks it to close as too
    /// slow, and when even the close cannot be written (the socket is full), it closes the socket after
    /// `ServerLimits.closeGrace`. Otherwise every such client would hold a connection and its queue forever.
    @Test func aClientThatStopsReadingIsCutOff() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let stalled = try await deafClient(of: fixture, token: context.token, hello: HandDevice().hello())
        defer { stalled.close() }
        try await eventually("the stalled client connected") { try await fixture.metric("folio_connections_open") == 1 }
        // An honest device sends more than the server queues for one client (8 MiB) and the server's socket holds (up
        // to 4 MiB): 24 MiB, each byte of which a debug build of the server unmasks slowly.
        let phone = try fixture.library("Phone")
        _ = try await megabyteDocuments(24, on: phone)
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: context.token)
        let report = try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(report.isComplete)
        try await eventually(within: .seconds(60), "the stalled client cut off") {
            try await fixture.metric("folio_connections_open") == 0
        }
        try await anHonestDeviceStillSyncs(context)
        // Cut off as too slow, not by the ping timeout (which a client that never reads never answers either).
        let log = try await stoppedServerLog(of: fixture)
        #expect(log.contains("the client read too slowly"), "\(log.suffix(2_000))")
    }

    /// A client that asks and asks without reading what it is sent cannot pile replies up in the server's memory:
    /// the server stops reading it once its queue is half full, and closes it once the stall timeout passes (here
    /// 2 s, then 10 s of grace for the close), well before the ping timeout (60 s) would.
    @Test func aClientThatAsksWithoutReadingIsClosedAfterTheStallTimeout() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--stall-timeout", "2"])
        let token = try await fixture.token(for: "notes")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let phone = try fixture.library("Phone")
        let documents = try await megabyteDocuments(24, on: phone)
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: endpoint)).isComplete)
        // 24 MiB of replies asked for, more than the server queues (8 MiB) and the sockets hold (its own up to 4 MiB,
        // the client's 32 KiB: a raw socket whose receive buffer cannot grow); the client reads none of it.
        let hand = HandDevice()
        let asking = try await deafClient(of: fixture, token: token, hello: hand.hello())
        defer { asking.close() }
        ask(asking, as: hand, for: documents)
        try await eventually("the asking client connected") { try await fixture.metric("folio_connections_open") == 1 }
        try await eventually(within: .seconds(40), "the asking client closed") {
            try await fixture.metric("folio_connections_open") == 0
        }
        // Closed for taking nothing within the stall timeout, not by the ping timeout.
        let log = try await stoppedServerLog(of: fixture)
        #expect(log.contains("it took nothing it was sent for"), "\(log.suffix(2_000))")
    }

    /// A client that drops its socket while the server waits for it to read what it asked for is let go when the
    /// socket closes, not when the stall timeout (60 s by default) passes: its connection, its queue and the wait
    /// do not outlive the socket, and the server stops at SIGTERM without waiting for them.
    @Test func aClientThatDropsItsSocketWhileTheServerWaitsIsLetGo() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--hello-timeout", "120", "--shutdown-grace", "3"])
        let token = try await fixture.token(for: "notes")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let phone = try fixture.library("Phone")
        let documents = try await randomMegabyteDocuments(16, on: phone)
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: endpoint)).isComplete)
        let sent = try await fixture.metric("folio_bytes_out_total") ?? 0
        let hand = HandDevice()
        let asking = try await deafClient(of: fixture, token: token, hello: hand.hello())
        ask(asking, as: hand, for: documents)
        try await eventually("the asking client connected") { try await fixture.metric("folio_connections_open") == 1 }
        // The server has sent more than the sockets hold (4 MiB) and half of what it queues for a client (8 MiB): it
        // reads nothing more from the client until the client reads.
        try await eventually(within: .seconds(60), "the replies queued") {
            (try await fixture.metric("folio_bytes_out_total") ?? 0) - sent > Double(6 << 20)
        }
        asking.close()
        try await eventually(within: .seconds(20), "the dropped client let go") {
            try await fixture.metric("folio_connections_open") == 0
        }
        let server = fixture.server
        let stopped = try await offThePool { () -> Duration in
            let start = ContinuousClock.now
            server.send(SIGTERM)
            _ = server.wait()
            return ContinuousClock.now - start
        }
        // Within the shutdown grace (3 s, for an idle HTTP connection of the metrics above), and a margin.
        #expect(stopped < .seconds(8), "the server took \(stopped) to stop")
    }

    /// A client that asks for more than the server queues for it (8 MiB of text no compression shrinks) and starts
    /// reading only later is waited for, not dropped: once it reads, the server goes on with the same connection
    /// and sends every reply, and it still answers the next request.
    @Test func aClientThatReadsLateIsServedToTheEnd() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: context.token)
        let phone = try fixture.library("Phone")
        let documents = try await randomMegabyteDocuments(12, on: phone)
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: endpoint)).isComplete)
        let hand = HandDevice()
        let late = try await deafClient(of: fixture, token: context.token, hello: hand.hello())
        defer { late.close() }
        ask(late, as: hand, for: documents)
        // The replies fill the sockets and more than half the queue: the server waits for the client.
        try await Task.sleep(for: .seconds(3))
        let received = try await offThePool { () -> (bytes: Int, closed: Bool) in
            var bytes = 0
            while bytes < 12 << 20, let frame = late.nextFrame(within: .seconds(20)) {
                if frame.opcode == 8 { return (bytes, true) }
                bytes += frame.payload.count
            }
            return (bytes, false)
        }
        #expect(!received.closed, "the server closed the connection after \(received.bytes) bytes")
        #expect(received.bytes >= 12 << 20, "\(received.bytes) bytes of replies")
        // Still served: another request is answered.
        let again = SyncFrame.encode(.request(document: documents[0], since: VersionVector()), on: hand.channel)
        _ = late.socket.send(RawWebSocket.frame(opcode: 2, again))
        let more = try await offThePool { () -> Int in
            var bytes = 0
            while bytes < 1 << 20, let frame = late.nextFrame(within: .seconds(20)), frame.opcode != 8 {
                bytes += frame.payload.count
            }
            return bytes
        }
        #expect(more >= 1 << 20, "the next request got \(more) bytes")
        #expect(try await fixture.metric("folio_connections_open") == 1)
    }

    /// A catch-up larger than what the server queues for a slow client (8 MiB) streams at the pace the client reads:
    /// a new device joins a library of 12 documents of 1 MiB, which the server reads from its log a few at a time.
    @Test func aNewDeviceCatchesUpOnALibraryLargerThanTheQueueBound() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: context.token)
        let phone = try fixture.library("Phone")
        let documents = try await megabyteDocuments(12, on: phone)
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: endpoint)).isComplete)
        let laptop = try fixture.library("Laptop")
        let report = try await laptop.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(report.isComplete)
        #expect(try laptop.store.summaries().map(\.vector) == phone.store.summaries().map(\.vector))
        let copy = try await laptop.open(documents[11], as: TextDocument.self)
        #expect(await copy.model.text.utf8.count == 1 << 20)
    }

    /// A device that wrote into one library (a change its key signed, stored there) cannot speak in another.
    @Test func aDeviceOfOneLibraryCannotWriteIntoAnother() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let hand = HandDevice()
        let change = hand.change(seq: 1, of: document, lamport: 1)
        let first = try await context.client().run(
            [.binary(hand.hello()), .binary(hand.changes([change], of: document))], linger: .seconds(1))
        #expect(first.closeCode == 1000 || first.closeCode == nil)
        let photos = try await fixture.token(for: "photos")
        let other = RawClient(fixture.server.libraryURL("photos"), token: photos)
        let outcome = try await other.run([.binary(hand.hello())])
        #expect(outcome.closeCode == 1008)
        #expect(outcome.reason?.contains("belongs to another library") == true, "\(outcome.reason ?? "")")
    }

    /// An honest device connected while another misbehaves keeps receiving: the hostile client's closing does not
    /// touch it.
    @Test func aLiveDeviceIsUnaffectedByAHostileOne() async throws {
        let context = try await Context()
        let fixture = context.fixture
        let token = context.token
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let phoneSync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "a\n"))
        try await eventually("the note on the laptop") { try await laptop.info(of: note.id) != nil }
        let hand = HandDevice()
        let bad = hand.change(seq: 1, of: document, lamport: ChangeLimits.counter)
        let outcome = try await context.client().run([
            .binary(hand.hello()), .binary(hand.changes([bad], of: document)),
        ])
        #expect(outcome.closeCode == 1008)
        try await note.edit([.append("b\n")])
        let copy = try await laptop.open(note.id, as: TextDocument.self)
        try await eventually("the edit on the laptop") { await copy.model.text == "a\nb\n" }
        await phoneSync.stop()
        await laptopSync.stop()
    }
}
