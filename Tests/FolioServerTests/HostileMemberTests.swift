import Folio
import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// What a member of a library (a valid token) can make the server do with what it sends: every name, binding,
/// relay, byte kept and byte of memory is bounded or refused, and the library's honest devices go on syncing. Each
/// test drives a real `folio serve` with a raw client. One test at a time: several send tens of MiB.
@Suite(.serialized) struct HostileMemberTests {
    /// A server with a library `notes`, and its token.
    final class Context {
        let fixture: ServerFixture
        let token: String

        init(arguments: [String] = []) async throws {
            // What a member sends must reach the library's checks, not the hello timeout, however loaded the machine
            // running the suite is.
            fixture = try await ServerFixture.start(arguments: ["--hello-timeout", "120"] + arguments)
            token = try await fixture.token(for: "notes")
        }

        func client() -> RawClient { RawClient(fixture.server.libraryURL("notes"), token: token) }

        var endpoint: ServerEndpoint {
            get throws { try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token) }
        }
    }

    /// A phone writes a note and a laptop reads it back through the server.
    private func anHonestDeviceStillSyncs(_ context: Context) async throws {
        let phone = try context.fixture.library("Phone-\(UUID().uuidString.prefix(8))")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("honest\n")])
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
        let laptop = try context.fixture.library("Laptop-\(UUID().uuidString.prefix(8))")
        #expect(try await laptop.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
        let copy = try await laptop.open(note.id, as: TextDocument.self)
        #expect(await copy.model.text == "honest\n")
    }

    // MARK: Names and bindings

    /// Names in a hello are not recorded: two hellos naming 15,000 invented devices with 1,000-byte names leave the
    /// hello the server sends at connect small, and the library's devices sync.
    @Test func inventedDeviceNamesDoNotReachTheServersHello() async throws {
        let context = try await Context()
        for round in 0..<2 {
            let invented = (0..<15_000).map { number in
                Device(id: DeviceKey().id, name: "\(round)-\(number)-" + String(repeating: "n", count: 990))
            }
            let hand = HandDevice()
            let hello = SyncFrame.encode(
                .hello(SyncHello(device: hand.device, session: 7, vectors: [:], devices: invented)), on: 7)
            #expect(hello.count > 14_000_000)
            _ = try await context.client().run([.binary(hello)], linger: .seconds(2))
        }
        let probe = try await context.client().run([.binary(HandDevice().hello())], linger: .seconds(2))
        let first = try #require(probe.received.first)
        #expect(first.count < 64 << 10, "the server's hello has \(first.count) bytes")
        try await anHonestDeviceStillSyncs(context)
    }

    /// Only a device's own hello names it, once it proved its key by writing: a member who names another device
    /// first does not choose its name.
    @Test func aMemberCannotNameAnotherDevice() async throws {
        let context = try await Context()
        let phone = try context.fixture.library("Phone")
        let squat = HandDevice()
        let hello = SyncFrame.encode(
            .hello(
                SyncHello(
                    device: squat.device, session: 7, vectors: [:],
                    devices: [Device(id: phone.store.localDevice.id, name: "not the phone")])), on: 7)
        _ = try await context.client().run([.binary(hello)], linger: .seconds(1))
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("a\n")])
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
        let laptop = try context.fixture.library("Laptop")
        #expect(try await laptop.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
        let names = try laptop.store.devices.all().filter { $0.id == phone.store.localDevice.id }.map(\.name)
        #expect(names == ["Phone"])
    }

    /// A device connected before another joins learns the newcomer's name once the newcomer writes, without
    /// reconnecting.
    @Test func aConnectedDeviceLearnsTheNameOfADeviceThatJoinsLater() async throws {
        let context = try await Context()
        let phone = try context.fixture.library("Phone")
        let phoneSync = try await phone.startSyncing(
            with: context.fixture.server.libraryURL("notes"), token: context.token)
        _ = try await firstEvent(of: phoneSync, "the phone caught up") {
            if case .syncFinished = $0 { return true } else { return false }
        }
        let tablet = try context.fixture.library("Tablet")
        let note = try await tablet.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the tablet\n")])
        #expect(try await tablet.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
        try await eventually("the phone knows the tablet's name") {
            try phone.store.devices.all().contains { $0.id == tablet.store.localDevice.id && $0.name == "Tablet" }
        }
        await phoneSync.stop()
    }

    /// A token of another library that claims a device (in its hello, or as the author of an unsigned change)
    /// binds nothing: the device still syncs with its own library.
    @Test func aClaimOfAnotherLibrarysDeviceBindsNothing() async throws {
        let context = try await Context()
        let phone = try context.fixture.library("Phone")
        let photos = try await context.fixture.token(for: "photos", account: "mallory")
        let claimer = RawClient(context.fixture.server.libraryURL("photos"), token: photos)
        let claimed = Device(id: phone.store.localDevice.id, name: "claimed")
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0x5C, count: 16)))
        let forger = HandDevice()
        var unsigned = forger.change(seq: 1, of: document, lamport: 1)
        unsigned = Change(
            document: document, id: ChangeID(device: claimed.id, seq: 1), parents: [],
            vector: VersionVector([(claimed.id, UInt64(1))]), lamport: 1, wallTime: unsigned.wallTime,
            kind: unsigned.kind)
        _ = try await claimer.run(
            [
                .binary(SyncFrame.encode(.hello(SyncHello(device: forger.device, session: 7, vectors: [:])), on: 7)),
                .binary(
                    SyncFrame.encode(
                        .changes(document: document, changes: [EncodedChange(unsigned)], heads: []), on: 7)),
            ], linger: .seconds(1))
        _ = try await claimer.run(
            [.binary(SyncFrame.encode(.hello(SyncHello(device: claimed, session: 9, vectors: [:])), on: 9))],
            linger: .seconds(1))
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("mine\n")])
        #expect(try await phone.sync(through: WebSocketTransport(endpoint: context.endpoint)).isComplete)
    }

    // MARK: What is relayed and kept

    /// The server passes on what a batch stored, not the bytes it received: a replayed message and a forged change
    /// under an identity the log holds reach no other device.
    @Test func onlyWhatABatchStoredIsPassedOn() async throws {
        let context = try await Context()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0x7E, count: 16)))
        let listener = context.client()
        let listening = Task { try await listener.run([.binary(HandDevice().hello())], linger: .seconds(8)) }
        try await eventually("the listener connected") {
            try await context.fixture.metric("folio_sync_sessions_total") == 1
        }
        let hand = HandDevice()
        let first = hand.change(seq: 1, of: document, lamport: 1)
        let message = hand.changes([first], of: document)
        let forged = hand.change(seq: 1, of: document, lamport: 1, text: "forged")
        let forgedMessage = SyncFrame.encode(
            .changes(document: document, changes: [EncodedChange(forged)], heads: []), on: hand.channel)
        _ = try await context.client().run(
            [.binary(hand.hello()), .binary(message), .binary(message), .binary(forgedMessage)], linger: .seconds(2))
        let outcome = try await listening.value
        var relayed: [ChangeHash] = []
        for frame in outcome.received {
            guard case .message(_, let inner) = try SyncFrame(decoding: frame),
                case .changes(_, let changes, _) = try SyncMessage(decoding: inner)
            else { continue }
            relayed += changes.map(\.change.hash)
        }
        #expect(relayed == [first.hash])
    }

    /// A head whose signature does not check closes the connection with 1008, as docs/protocol.md says.
    @Test func aHeadWithABadSignatureCloses1008() async throws {
        let context = try await Context()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0x3D, count: 16)))
        let hand = HandDevice()
        let change = hand.change(seq: 1, of: document, lamport: 1)
        let good = SignedHead(signing: change, with: hand.key)
        var signature = good.signature
        signature[0] ^= 0xFF
        let bad = SignedHead(
            document: document, change: good.change, hash: good.hash, publicKey: good.publicKey, signature: signature)
        let outcome = try await context.client().run([
            .binary(hand.hello()),
            .binary(
                SyncFrame.encode(
                    .changes(document: document, changes: [EncodedChange(change)], heads: [bad]), on: hand.channel)),
        ])
        #expect(outcome.closeCode == 1008)
        try await anHonestDeviceStillSyncs(context)
    }

    /// Changes nobody vouches for are kept only up to a bound: unsigned 8 MiB changes under new documents do not
    /// grow the library's file past it.
    @Test func unsignedChangesAreKeptOnlyUpToABound() async throws {
        let context = try await Context()
        let hand = HandDevice()
        var messages: [RawClient.Message] = [.binary(hand.hello())]
        for number in 0..<10 {
            let document = DocumentID(UUIDBytes(bytes: Array(repeating: UInt8(number), count: 15) + [0xEE]))
            let change = hand.edit(seq: 1, of: document, bytes: 8 << 20)
            messages.append(
                .binary(
                    SyncFrame.encode(
                        .changes(document: document, changes: [EncodedChange(change)], heads: []), on: hand.channel)))
        }
        _ = try await context.client().run(messages, linger: .seconds(3))
        try await anHonestDeviceStillSyncs(context)
        let size = try Self.bytes(under: context.fixture.server.data.appendingPathComponent("libraries"))
        #expect(size < 40 << 20, "the libraries take \(size) bytes")
    }

    /// A library over its storage quota takes no more changes: the connection that brings them is closed with 4413.
    @Test func aLibraryOverItsQuotaTakesNoMoreChanges() async throws {
        let context = try await Context(arguments: ["--library-quota", "\(3 << 20)"])
        let hand = HandDevice()
        var previous: Change?
        var messages: [RawClient.Message] = [.binary(hand.hello())]
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0x41, count: 16)))
        let created = hand.change(seq: 1, of: document, lamport: 1)
        messages.append(.binary(hand.changes([created], of: document)))
        previous = created
        for seq in 2...7 {
            let change = hand.edit(seq: UInt64(seq), of: document, after: previous, bytes: 1 << 20)
            messages.append(.binary(hand.changes([change], of: document)))
            previous = change
        }
        let outcome = try await context.client().run(messages)
        #expect(outcome.closeCode == 4413)
        #expect(outcome.reason?.contains("quota") == true, "\(outcome.reason ?? "")")
        let size = try Self.bytes(under: context.fixture.server.data.appendingPathComponent("libraries"))
        #expect(size < 6 << 20, "the libraries take \(size) bytes")
    }

    // MARK: Memory

    /// A hello announcing more documents than a library may hold is refused (1008) before the server holds it.
    @Test func aHelloAnnouncingMoreDocumentsThanALibraryHoldsIsRefused() async throws {
        let context = try await Context(arguments: ["--documents-per-library", "1000"])
        let hand = HandDevice()
        let outcome = try await context.client().run([.binary(Self.hello(of: hand, announcing: 1_001))])
        #expect(outcome.closeCode == 1008)
        #expect(outcome.reason?.contains("documents") == true, "\(outcome.reason ?? "")")
    }

    /// Hellos announcing 100,000 documents each (as many as a library may hold; 3.7 MB), from clients that never read, do not fill the server's memory:
    /// requests go a few documents at a time, replies wait for the client to read, and a connection keeps a bounded
    /// number of sessions, so that more hellos take no more memory than the first.
    @Test func hellosOfManyDocumentsDoNotFillTheServersMemory() async throws {
        let context = try await Context()
        let pid = context.fixture.server.processIdentifier
        var stalled: [Task<Void, any Error>] = []
        defer { for task in stalled { task.cancel() } }
        func attack(hellos: Int, sessions: Double) async throws {
            for _ in 0..<2 {
                let hand = HandDevice()
                // Each on a channel of its own: a session each.
                let messages = (0..<hellos).map { channel in
                    RawClient.Message.binary(Self.hello(of: hand, announcing: 100_000, on: UInt64(channel)))
                }
                let client = context.client()
                stalled.append(Task { try await client.stall(after: messages, for: .seconds(300)) })
            }
            try await eventually(within: .seconds(240), "the hellos arrived") {
                try await context.fixture.metric("folio_sync_sessions_total") ?? 0 >= sessions
            }
            try await Task.sleep(for: .seconds(2))
        }
        try await attack(hellos: 1, sessions: 2)
        let first = try Self.peakResidentBytes(of: pid)
        for task in stalled { task.cancel() }
        try await eventually(within: .seconds(60), "the first clients gone") {
            try await context.fixture.metric("folio_connections_open") == 0
        }
        try await attack(hellos: 4, sessions: 10)
        let after = try Self.peakResidentBytes(of: pid)
        #expect(
            after - first < 120 << 20,
            "four hellos a connection instead of one grew the server's peak memory by \((after - first) >> 20) MiB")
        for task in stalled { task.cancel() }
        try await anHonestDeviceStillSyncs(context)
    }

    /// Sixteen 15 MiB `changes` messages sent at once over four connections do not take the server's memory past
    /// its budget for messages in flight.
    @Test func largeMessagesInFlightStayWithinTheBudget() async throws {
        let context = try await Context(arguments: ["--memory-budget", "\(64 << 20)"])
        let before = try Self.peakResidentBytes(of: context.fixture.server.processIdentifier)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in 0..<4 {
                let client = context.client()
                group.addTask {
                    let hand = HandDevice()
                    var messages: [RawClient.Message] = [.binary(hand.hello())]
                    for number in 0..<4 {
                        let document = DocumentID(
                            UUIDBytes(bytes: [UInt8(connection), UInt8(number)] + Array(repeating: 0x99, count: 14)))
                        let change = hand.change(
                            seq: 1, of: document, lamport: 1, text: String(repeating: "m", count: 15 << 20 - 4096))
                        messages.append(.binary(hand.changes([change], of: document)))
                    }
                    _ = try await client.run(messages, linger: .seconds(10))
                }
            }
            try await group.waitForAll()
        }
        let after = try Self.peakResidentBytes(of: context.fixture.server.processIdentifier)
        #expect(after - before < 500 << 20, "the server's peak memory grew by \((after - before) >> 20) MiB")
        try await anHonestDeviceStillSyncs(context)
    }

    // MARK: Helpers

    /// A hello of `hand` on `channel` announcing `count` documents it has and the server does not (one change each).
    static func hello(of hand: HandDevice, announcing count: Int, on channel: UInt64 = 7) -> [UInt8] {
        var vectors: [DocumentID: VersionVector] = [:]
        vectors.reserveCapacity(count)
        for number in 0..<count {
            var bytes = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(number).bigEndian) { bytes.replaceSubrange(8..<16, with: $0) }
            bytes[0] = 0xD0
            vectors[DocumentID(UUIDBytes(bytes: bytes))] = VersionVector([(hand.key.id, UInt64(1))])
        }
        return SyncFrame.encode(
            .hello(SyncHello(device: hand.device, session: channel, vectors: vectors)), on: channel)
    }

    /// The peak resident memory of process `pid` (`VmHWM` of /proc/PID/status), in bytes.
    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes << 10
    }

    /// The bytes of every file under `directory`.
    static func bytes(under directory: URL) throws -> Int {
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey])
        var total = 0
        while let file = files?.nextObject() as? URL {
            total += try file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
        }
        return total
    }
}

extension HandDevice {
    /// An edit of this device carrying `bytes` random bytes (which compression does not shrink), after `previous`.
    func edit(seq: UInt64, of document: DocumentID, after previous: Change? = nil, bytes: Int) -> Change {
        var random = SystemRandomNumberGenerator()
        var operations = Data(count: bytes)
        operations.withUnsafeMutableBytes { buffer in
            for index in stride(from: 0, to: buffer.count, by: 8) {
                withUnsafeBytes(of: random.next()) { word in
                    for offset in 0..<min(8, buffer.count - index) { buffer[index + offset] = word[offset] }
                }
            }
        }
        var vector = previous?.vector ?? VersionVector()
        vector[key.id] = seq
        return Change(
            document: document, id: ChangeID(device: key.id, seq: seq), parents: previous.map { [$0.hash] } ?? [],
            vector: vector, lamport: (previous?.lamport ?? 0) + 1,
            wallTime: Timestamp(millisecondsSince1970: 1_700_000_000_000), kind: .edit(Edit(operations: operations)))
    }
}
