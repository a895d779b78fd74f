import Folio
import FolioCore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Presence through a real `folio serve`: a device's state in a document reaches the library's other devices that
/// read presence, with the device and the bytes it sent, and nobody else; the server keeps the latest states in
/// memory only, shows them to a device that joins, takes them away when a connection ends, and holds every bound of
/// docs/protocol.md ("Presence") with the close code or the drop it promises.
struct PresenceRelayTests {
    /// A server with a library `notes`, and its token. The waits below are long (60 s, reached only by a failure):
    /// under the whole suite in parallel, the clients' tasks can wait seconds for a thread.
    final class Context {
        let fixture: ServerFixture
        let token: String

        init(arguments: [String] = []) async throws {
            fixture = try await ServerFixture.start(arguments: arguments)
            token = try await fixture.token(for: "notes")
        }

        /// A connection to `notes` that reads presence (unless told otherwise) and sends `hand`'s hello first.
        func connect(_ hand: HandDevice?, readsPresence: Bool = true, library: String = "notes", token: String? = nil)
            -> OpenClient
        {
            OpenClient(
                fixture.server.libraryURL(library), token: token ?? self.token, readsPresence: readsPresence,
                sending: hand.map { [$0.hello()] } ?? [])
        }

        /// A connection that has said hello: the server's hello has arrived.
        func joined(_ hand: HandDevice, readsPresence: Bool = true, library: String = "notes", token: String? = nil)
            async throws -> OpenClient
        {
            let client = connect(hand, readsPresence: readsPresence, library: library, token: token)
            try await eventually(within: .seconds(60), "the server's hello") {
                !client.received.isEmpty || client.failure != nil
            }
            if let failure = client.failure { Issue.record("the connection failed: \(failure)") }
            return client
        }
    }

    static func document(_ byte: UInt8) -> DocumentID {
        DocumentID(UUIDBytes(bytes: Array(repeating: byte, count: 16)))
    }

    /// A cursor in a text, as an app sends it.
    static func cursor(_ name: String, at position: Int) -> [UInt8] {
        PresenceState(name: name, heads: [], anchor: position, head: position).encoded()
    }

    /// Waits until `client` has received `count` presence frames at least.
    static func presences(_ count: Int, of client: OpenClient) async throws -> [OpenClient.Presence] {
        try await eventually(within: .seconds(60), "\(count) presence frames") { client.presences.count >= count }
        return client.presences
    }

    // MARK: Relay

    /// The state reaches another device of the library with the sender's device and exactly the bytes sent (the
    /// server does not decode them), and does not come back to its sender.
    @Test func aStateReachesAnotherDeviceOfTheLibraryWithItsDeviceAndBytes() async throws {
        let context = try await Context()
        let sender = HandDevice()
        let peer = try await context.joined(HandDevice())
        let sending = try await context.joined(sender)
        let state = Self.cursor("Ada's phone", at: 12)
        sending.send(sender.presence(in: Self.document(1), state))
        // Bytes no decoder of PresenceState takes: relayed as they are.
        let opaque: [UInt8] = [0xFF, 0x00, 0x13, 0x37]
        sending.send(sender.presence(in: Self.document(2), opaque))
        let received = try await Self.presences(2, of: peer)
        #expect(
            received == [
                .init(document: Self.document(1), device: sender.key.id, state: state),
                .init(document: Self.document(2), device: sender.key.id, state: opaque),
            ])
        #expect(sending.presences.isEmpty, "the sender got its own presence back")
        #expect(try await context.fixture.metric("folio_presence_relayed_total") == 2)
    }

    /// A device's live sync sends its state again every 10 s (`PresenceBoard.renewal`) while it stays, unchanged:
    /// the others drop a state not heard again for 30 s.
    @Test func aLiveSyncSendsItsStateAgainWhileItStays() async throws {
        let context = try await Context()
        let watcher = try await context.joined(HandDevice())
        let phone = try context.fixture.library("Phone")
        let sync = try await phone.startSyncing(with: context.fixture.server.libraryURL("notes"), token: context.token)
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "hello"))
        try await note.setSelection(TextSelection(cursor: 2))
        let phoneID = phone.device.id
        try await eventually(within: .seconds(60), "the state sent a second time") {
            watcher.presences.filter { $0.device == phoneID }.count >= 2
        }
        let sent = watcher.presences.filter { $0.device == phoneID }
        #expect(Set(sent.map(\.state)).count == 1 && !sent[0].state.isEmpty, "the same state, renewed")
        await sync.stop()
    }

    /// A device of another library, reading presence, receives nothing of this library's.
    @Test func noStateReachesAnotherLibrary() async throws {
        let context = try await Context()
        let photos = try await context.fixture.token(for: "photos")
        let stranger = try await context.joined(HandDevice(), library: "photos", token: photos)
        let peer = try await context.joined(HandDevice())
        let sender = HandDevice()
        let sending = try await context.joined(sender)
        sending.send(sender.presence(in: Self.document(1), Self.cursor("phone", at: 1)))
        _ = try await Self.presences(1, of: peer)
        // Anything queued for the stranger was queued with the peer's frame.
        try await Task.sleep(for: .milliseconds(300))
        #expect(stranger.presences.isEmpty)
        #expect(!stranger.hasEnded)
    }

    /// A client that did not send `Folio-Presence: 1` at the upgrade (an older client, which would refuse an unknown
    /// frame kind) is sent no presence frame, neither relayed nor at its hello, and goes on syncing.
    @Test func noStateReachesAClientThatDidNotSayItReadsPresence() async throws {
        let context = try await Context()
        let sender = HandDevice()
        let sending = try await context.joined(sender)
        sending.send(sender.presence(in: Self.document(1), Self.cursor("phone", at: 1)))
        let peer = try await context.joined(HandDevice())
        _ = try await Self.presences(1, of: peer)
        let older = HandDevice()
        let old = try await context.joined(older, readsPresence: false)
        sending.send(sender.presence(in: Self.document(1), Self.cursor("phone", at: 2)))
        _ = try await Self.presences(2, of: peer)
        try await Task.sleep(for: .milliseconds(300))
        #expect(old.presences.isEmpty)
        // Its connection is as usable as before: a change it sends is acknowledged.
        let change = older.change(seq: 1, of: Self.document(9), lamport: 1)
        old.send(older.changes([change], of: Self.document(9)))
        try await eventually(within: .seconds(60), "the acknowledgement") { old.notices.contains(Self.document(9)) }
        #expect(old.presences.isEmpty)
    }

    /// The server answers an upgrade that asks for presence with `Folio-Presence: 1` (a client sends presence only to
    /// a server that relays it), and one that does not ask without it.
    @Test func theUpgradeAnswerSaysTheServerRelaysPresence() async throws {
        let context = try await Context()
        let port = context.fixture.server.port
        let token = context.token
        let answers = try await offThePool { () -> [String] in
            try [["Folio-Presence: 1"], ["Folio-Presence: 2, 1"], [], ["Folio-Presence: 2"]].map { headers in
                let client = try RawWebSocket(port: port, library: "notes", token: token, headers: headers)
                defer { client.close() }
                return client.answer.lowercased()
            }
        }
        #expect(answers.allSatisfy { $0.hasPrefix("http/1.1 101") }, "\(answers)")
        #expect(answers.map { $0.contains("folio-presence: 1") } == [true, true, false, false], "\(answers)")
    }

    // MARK: Joining and leaving

    /// A connection's states leave with it: when it ends, the others receive an empty state for its device in each
    /// document where it showed one, and in no other.
    @Test func anEmptyStateIsRelayedWhenTheSenderDisconnects() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let sender = HandDevice()
        let sending = try await context.joined(sender)
        sending.send(sender.presence(in: Self.document(1), Self.cursor("phone", at: 1)))
        sending.send(sender.presence(in: Self.document(2), Self.cursor("phone", at: 2)))
        sending.send(sender.presence(in: Self.document(3), Self.cursor("phone", at: 3)))
        // Emptied by the device itself: nothing of it is left to take away.
        sending.send(sender.presence(in: Self.document(3), []))
        _ = try await Self.presences(4, of: peer)
        await sending.close()
        let received = try await Self.presences(6, of: peer)
        #expect(
            Set(received.suffix(2)) == [
                .init(document: Self.document(1), device: sender.key.id, state: []),
                .init(document: Self.document(2), device: sender.key.id, state: []),
            ])
        try await Task.sleep(for: .milliseconds(300))
        #expect(peer.presences.count == 6)
    }

    /// A device that joins is sent, after its hello, the state each other connection shows in each document, one frame
    /// each; a state emptied since is not among them.
    @Test func aLateJoinerReceivesTheCurrentStatesAfterItsHello() async throws {
        let context = try await Context()
        let phone = HandDevice()
        let laptop = HandDevice()
        let phoneClient = try await context.joined(phone)
        let laptopClient = try await context.joined(laptop)
        phoneClient.send(phone.presence(in: Self.document(1), Self.cursor("phone", at: 1)))
        phoneClient.send(phone.presence(in: Self.document(2), Self.cursor("phone", at: 2)))
        phoneClient.send(phone.presence(in: Self.document(2), Self.cursor("phone", at: 5)))
        laptopClient.send(laptop.presence(in: Self.document(1), Self.cursor("laptop", at: 7)))
        laptopClient.send(laptop.presence(in: Self.document(3), Self.cursor("laptop", at: 8)))
        laptopClient.send(laptop.presence(in: Self.document(3), []))
        _ = try await Self.presences(3, of: phoneClient)
        _ = try await Self.presences(3, of: laptopClient)
        let tablet = HandDevice()
        let late = context.connect(tablet)
        let received = try await Self.presences(3, of: late)
        #expect(
            Set(received) == [
                .init(document: Self.document(1), device: phone.key.id, state: Self.cursor("phone", at: 1)),
                .init(document: Self.document(2), device: phone.key.id, state: Self.cursor("phone", at: 5)),
                .init(document: Self.document(1), device: laptop.key.id, state: Self.cursor("laptop", at: 7)),
            ])
        // After the server's hello, which is the first frame.
        guard case .message? = try? SyncFrame(decoding: late.received[0]) else {
            Issue.record("the first frame is not the server's hello")
            return
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(late.presences.count == 3)
        // The server's welcome came first: a client sends presence only once it has seen it.
        #expect(late.welcomes == [0])
    }

    /// A device that reconnected (its new connection shows its state) before its old connection was found closed does
    /// not vanish from the others' screens when the old one closes; where only the old connection showed a state,
    /// the state goes.
    @Test func aDeviceThatReconnectedDoesNotVanishWhenItsOldConnectionCloses() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let device = HandDevice()
        let old = try await context.joined(device)
        old.send(device.presence(in: Self.document(1), Self.cursor("phone", at: 1)))
        old.send(device.presence(in: Self.document(2), Self.cursor("phone", at: 2)))
        _ = try await Self.presences(2, of: peer)
        let new = try await context.joined(device)
        new.send(device.presence(in: Self.document(1), Self.cursor("phone", at: 3)))
        _ = try await Self.presences(3, of: peer)
        await old.close()
        try await eventually(within: .seconds(60), "the old connection gone") {
            try await context.fixture.metric("folio_connections_open") == 2
        }
        // A last frame after whatever the old connection's end sent the peer.
        new.send(device.presence(in: Self.document(4), Self.cursor("phone", at: 4)))
        let received = try await Self.presences(5, of: peer)
        #expect(
            Array(received.suffix(2)) == [
                .init(document: Self.document(2), device: device.key.id, state: []),
                .init(document: Self.document(4), device: device.key.id, state: Self.cursor("phone", at: 4)),
            ])
    }

    // MARK: Bounds

    /// A state larger than `--presence-bytes` closes the connection with 1009, as does one past what the frame
    /// decoder takes (4,096 bytes); a state of exactly the bound is relayed.
    @Test func aStateOverPresenceBytesCloses1009() async throws {
        let context = try await Context(arguments: ["--presence-bytes", "700"])
        let peer = try await context.joined(HandDevice())
        let sender = HandDevice()
        let sending = try await context.joined(sender)
        sending.send(sender.presence(in: Self.document(1), Array(repeating: 7, count: 700)))
        _ = try await Self.presences(1, of: peer)
        sending.send(sender.presence(in: Self.document(1), Array(repeating: 7, count: 701)))
        try await eventually(within: .seconds(60), "the close") { sending.hasEnded }
        #expect(sending.closeCode == 1009)
        #expect(sending.reason?.contains("700") == true, "\(sending.reason ?? "")")
        let huge = HandDevice()
        let hugeClient = try await context.joined(huge)
        hugeClient.send(huge.presence(in: Self.document(1), Array(repeating: 7, count: 5_000)))
        try await eventually(within: .seconds(60), "the close") { hugeClient.hasEnded }
        #expect(hugeClient.closeCode == 1009)
        // Neither was relayed; the first sender's state left with its connection.
        try await eventually(within: .seconds(60), "the departure") { peer.presences.count == 2 }
        #expect(peer.presences.last == .init(document: Self.document(1), device: sender.key.id, state: []))
    }

    /// A presence frame before the connection's hello closes it with 1002, as other frames do.
    @Test func presenceBeforeAHelloCloses1002() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let hand = HandDevice()
        let client = context.connect(nil)
        client.send(hand.presence(in: Self.document(1), Self.cursor("hand", at: 1)))
        try await eventually(within: .seconds(60), "the close") { client.hasEnded }
        #expect(client.closeCode == 1002)
        #expect(client.reason?.contains("before a hello") == true, "\(client.reason ?? "")")
        #expect(peer.presences.isEmpty)
    }

    /// A presence frame that names a device other than the connection's hello closes it with 1008: a member cannot
    /// put a cursor on the others' screens in another device's name.
    @Test func presenceNamingAnotherDeviceCloses1008() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let victim = HandDevice()
        let hand = HandDevice()
        let client = try await context.joined(hand)
        client.send(victim.presence(in: Self.document(1), Self.cursor("not me", at: 1)))
        try await eventually(within: .seconds(60), "the close") { client.hasEnded }
        #expect(client.closeCode == 1008)
        #expect(client.reason?.contains("another device") == true, "\(client.reason ?? "")")
        try await Task.sleep(for: .milliseconds(300))
        #expect(peer.presences.isEmpty)
    }

    /// A flood of presence frames past `--presence-per-second` is dropped, counted, at the sender's connection: a peer
    /// receives about the bound (the burst, and the rate for the time the flood took), and the flooding connection
    /// stays open and syncs.
    @Test func aFloodPastPresencePerSecondIsDroppedAndTheConnectionStillSyncs() async throws {
        let rate = 10
        let context = try await Context(arguments: ["--presence-per-second", "\(rate)"])
        let peer = try await context.joined(HandDevice())
        let hand = HandDevice()
        let flooding = try await context.joined(hand)
        let flood = 300
        let start = ContinuousClock.now
        for position in 0..<flood {
            flooding.send(hand.presence(in: Self.document(1), Self.cursor("hand", at: position)))
        }
        // Its sync still works: a change sent after the flood is stored and acknowledged, once every frame before it
        // was read.
        let change = hand.change(seq: 1, of: Self.document(9), lamport: 1)
        flooding.send(hand.changes([change], of: Self.document(9)))
        try await eventually(within: .seconds(60), "the acknowledgement") {
            flooding.notices.contains(Self.document(9))
        }
        let elapsed = ContinuousClock.now - start
        // The peer's frames travel on a connection of their own: on a busy machine they may arrive after the
        // acknowledgement. Nothing more is relayed once the burst has arrived (the flood ended before the change).
        try await eventually(within: .seconds(30), "the burst") { peer.presences.count >= rate }
        try await Task.sleep(for: .milliseconds(300))
        let received = peer.presences.count
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(received >= rate, "the burst of \(rate) was not relayed: \(received)")
        #expect(
            Double(received) <= Double(rate) * (1 + seconds) + 1,
            "\(received) of \(flood) relayed in \(seconds) s at \(rate) a second")
        #expect(!flooding.hasEnded)
        let dropped = try await context.fixture.metric("folio_presence_dropped_total") ?? 0
        #expect(Int(dropped) == flood - received)
        // The latest state that passed is what a device joining sees.
        let late = context.connect(HandDevice())
        let shown = try await Self.presences(1, of: late)
        #expect(shown == [try #require(peer.presences.last)])
    }

    /// A connection shows a state in at most 16 documents (`--presence-documents`) at once: a state for a 17th is
    /// dropped, and taken once the connection emptied one of the others.
    @Test func aSeventeenthDocumentIsDropped() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let hand = HandDevice()
        let client = try await context.joined(hand)
        for number in 1...17 {
            client.send(hand.presence(in: Self.document(UInt8(number)), Self.cursor("hand", at: number)))
        }
        client.send(hand.presence(in: Self.document(1), []))
        client.send(hand.presence(in: Self.document(17), Self.cursor("hand", at: 17)))
        let received = try await Self.presences(18, of: peer)
        let expected =
            (1...16).map {
                OpenClient.Presence(
                    document: Self.document(UInt8($0)), device: hand.key.id, state: Self.cursor("hand", at: $0))
            } + [
                .init(document: Self.document(1), device: hand.key.id, state: []),
                .init(document: Self.document(17), device: hand.key.id, state: Self.cursor("hand", at: 17)),
            ]
        #expect(received == expected)
        #expect(try await context.fixture.metric("folio_presence_dropped_total") == 1)
        #expect(!client.hasEnded)
    }

    /// A recipient that stops reading misses presence instead of piling it up: once its queue is busy (half the
    /// queue's bounds), presence frames for it are dropped, counted, and it is not closed as too slow, however many
    /// arrive; the sender is not slowed either.
    @Test func aRecipientBehindInReadingMissesPresenceAndStaysOpen() async throws {
        // A shutdown grace of 1 s: the server waits that long for the idle HTTP connection of the metrics.
        let context = try await Context(arguments: [
            "--presence-per-second", "10000", "--presence-bytes", "4096", "--shutdown-grace", "1",
        ])
        let port = context.fixture.server.port
        let token = context.token
        let deafHand = HandDevice()
        let deaf = try await offThePool {
            try RawWebSocket(
                port: port, library: "notes", token: token, receiveBuffer: 16 << 10, headers: ["Folio-Presence: 1"])
        }
        defer { deaf.close() }
        #expect(deaf.upgraded)
        _ = deaf.socket.send(RawWebSocket.frame(opcode: 2, deafHand.hello()))
        try await eventually(within: .seconds(60), "the deaf client's session") {
            try await context.fixture.metric("folio_sync_sessions_total") == 1
        }
        let hand = HandDevice()
        let sender = try await context.joined(hand)
        // 12 MiB of presence: more than the sockets hold (a few MiB) and than half the queue's bounds (4 MiB).
        let flood = 3_000
        for number in 0..<flood {
            var state = [UInt8](repeating: 0x50, count: 4_096)
            withUnsafeBytes(of: UInt32(number).bigEndian) { state.replaceSubrange(0..<4, with: $0) }
            sender.send(hand.presence(in: Self.document(1), state))
        }
        let change = hand.change(seq: 1, of: Self.document(9), lamport: 1)
        sender.send(hand.changes([change], of: Self.document(9)))
        try await eventually(within: .seconds(60), "the sender's acknowledgement") {
            sender.notices.contains(Self.document(9))
        }
        let dropped = try await context.fixture.metric("folio_presence_dropped_total") ?? 0
        let relayed = try await context.fixture.metric("folio_presence_relayed_total") ?? 0
        #expect(dropped > 0, "nothing was dropped for the deaf client")
        #expect(Int(dropped + relayed) == flood, "\(dropped) dropped and \(relayed) relayed of \(flood)")
        #expect(try await context.fixture.metric("folio_connections_open") == 2)
        #expect(!sender.hasEnded)
        // Gone before the server stops, which would otherwise wait its shutdown grace for a client that reads nothing.
        deaf.close()
        try await eventually(within: .seconds(60), "the deaf client gone") {
            try await context.fixture.metric("folio_connections_open") == 1
        }
        let server = context.fixture.server
        let log = try await offThePool { () -> String in
            server.send(SIGTERM)
            return server.wait().errors
        }
        #expect(!log.contains("read too slowly"), "\(log.suffix(2_000))")
    }

    /// Presence is never written: a state's bytes appear in no file of the data directory and in no line the server
    /// logged, not even after the server stopped.
    @Test func presenceReachesNoFileAndNoLogLine() async throws {
        let context = try await Context()
        let peer = try await context.joined(HandDevice())
        let hand = HandDevice()
        let client = try await context.joined(hand)
        let marker = "presence-marker-\(UUID().uuidString)"
        client.send(hand.presence(in: Self.document(1), Self.cursor(marker, at: 1)))
        _ = try await Self.presences(1, of: peer)
        // A frame that closes the connection is logged with its reason: not with the state's bytes either.
        client.send(HandDevice().presence(in: Self.document(1), Self.cursor(marker, at: 2)))
        try await eventually(within: .seconds(60), "the close") { client.hasEnded }
        let server = context.fixture.server
        let log = try await offThePool { () -> String in
            server.send(SIGTERM)
            return server.wait().errors
        }
        #expect(log.contains("a presence frame names another device"))
        #expect(!log.contains(marker))
        let files = FileManager.default.enumerator(at: server.data, includingPropertiesForKeys: nil)
        var searched = 0
        while let file = files?.nextObject() as? URL {
            guard let bytes = try? Data(contentsOf: file) else { continue }
            searched += 1
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(file.lastPathComponent) holds the state")
        }
        #expect(searched > 0)
    }
}

extension HandDevice {
    /// A presence frame of this device showing `state` in `document`.
    func presence(in document: DocumentID, _ state: [UInt8]) -> [UInt8] {
        SyncFrame.presence(document: document, device: key.id, state: state).encoded()
    }
}
