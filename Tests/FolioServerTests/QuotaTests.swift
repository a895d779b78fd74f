import Folio
import FolioCore
import FolioServer
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// The allowance of changes a second per token (`folio serve --changes-per-second`) against a real flood: the noisy
/// token's changes are stored at its rate, not at the rate it sends them, and another library's devices keep their
/// latency meanwhile.
@Suite struct QuotaTests {
    @Test func aFloodingTokenIsPacedAndAnotherLibrarySyncsMeanwhile() async throws {
        let rate = 200
        let fixture = try await ServerFixture.start(arguments: ["--changes-per-second", "\(rate)"])
        let port = fixture.server.port
        let noisy = try await fixture.token(for: "notes")
        let probe = try await fixture.token(for: "notes")
        let calm = try await fixture.token(for: "calm")

        // The calm library: two devices, one typing, one watching.
        let alice = try fixture.library("Alice")
        let bob = try fixture.library("Bob")
        let aliceSync = try await alice.startSyncing(with: fixture.server.libraryURL("calm"), token: calm)
        let bobSync = try await bob.startSyncing(with: fixture.server.libraryURL("calm"), token: calm)
        let note = try await alice.create(TextDocument.self, named: "Calm", in: .shared)
        try await note.edit([.append("start\n")])
        try await eventually("the note on bob's device") { try await bob.info(of: note.id) != nil }
        let watched = try await bob.open(note.id, as: TextDocument.self)
        try await eventually("the first line on bob's device") { await watched.model.text == "start\n" }
        // The calm library's pace without a flood, measured the same way just before it: this machine is shared with
        // other tests, so the flood's effect is judged against it, not against a fixed figure.
        let unloaded = try await Self.lineLatencies(of: note, seenIn: watched, from: 0)

        // The flood: 100 changes a message every 20 ms (5,000 a second, 25 times the allowance), for five seconds;
        // faster would only starve the other tests of this machine.
        let hand = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xF1, count: 16)))
        // Two connections of the token, the same device: the allowance is the token's, whichever connection a
        // message comes by.
        let sockets = try (0..<2).map { _ in try RawWebSocket(port: port, library: "notes", token: noisy) }
        for socket in sockets {
            #expect(socket.upgraded)
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
            // A send the server does not take looks at the clock every 100 ms (the flood ends at its deadline).
            socket.socket.setSendTimeout(.milliseconds(100))
        }
        let floodStarted = ContinuousClock.now
        let flooding = Task {
            try await offThePool { () -> UInt64 in
                let started = ContinuousClock.now
                var parents: [Change] = []
                var sent: UInt64 = 0
                var turn = 0
                while ContinuousClock.now - started < .seconds(5) {
                    let due = started + .milliseconds(20 * turn)
                    if due > .now { Thread.sleep(forTimeInterval: Double((due - .now).components.attoseconds) / 1e18) }
                    var batch: [Change] = []
                    for _ in 0..<100 {
                        let change = hand.change(seq: sent + 1, of: document, parents: parents, lamport: sent + 1)
                        batch.append(change)
                        parents = [change]
                        sent += 1
                    }
                    let socket = sockets[turn % sockets.count].socket
                    turn += 1
                    guard
                        socket.send(
                            RawWebSocket.frame(opcode: 2, hand.changes(batch, of: document)),
                            until: started + .seconds(5))
                    else { break }
                }
                return sent
            }
        }
        // Meanwhile alice types a line at a time, and each line's time to bob's screen is measured.
        try await Task.sleep(for: .milliseconds(500))
        let latencies = try await Self.lineLatencies(of: note, seenIn: watched, from: unloaded.count)
        let sent = try await flooding.value
        // What waits in the sockets is thrown away with them, so that the server stops taking the flood.
        for socket in sockets { socket.socket.reset() }
        let stored = try await storedSeq(of: document, device: hand, port: port, token: probe)
        // By the time the probe has read, the server cannot have stored more than the burst, the rate over the time
        // since the flood began, and a message in flight on each connection.
        let since = ContinuousClock.now - floodStarted
        let allowed = UInt64(rate * ChangeQuotaBurst.seconds) + UInt64(Double(rate) * since.inSeconds) + 200
        let median = latencies[latencies.count / 2]
        let baseline = unloaded[unloaded.count / 2]
        print(
            "noisy tenant: sent \(sent), stored \(stored) within \(since) (allowed \(allowed)); calm latency p50 \(median), max \(latencies.last!), without the flood p50 \(baseline)"
        )
        // The flood outran what its allowance pays for over its five seconds, many times over.
        #expect(sent > 3 * UInt64(rate * (ChangeQuotaBurst.seconds + 5)), "the flood sent only \(sent)")
        #expect(stored <= allowed, "stored \(stored) of the flood's \(sent), past the \(allowed) allowed")
        #expect(stored >= UInt64(rate * ChangeQuotaBurst.seconds), "the burst is stored at once: \(stored)")
        // The calm library kept its pace.
        #expect(median < baseline * 2 + .milliseconds(250), "calm latency p50 \(median), \(baseline) without the flood")
        #expect(latencies.last! < .seconds(5), "calm latency max \(latencies.last!)")
        await aliceSync.stop()
        await bobSync.stop()
    }

    /// The time each of 20 lines appended to `note` takes to show in `watched`, sorted.
    private static func lineLatencies(
        of note: Document<TextDocument>, seenIn watched: Document<TextDocument>, from first: Int
    ) async throws -> [Duration] {
        var latencies: [Duration] = []
        for line in first..<(first + 20) {
            let text = "line \(line)\n"
            let typed = ContinuousClock.now
            try await note.edit([.append(text)])
            try await eventually(within: .seconds(10), "line \(line) on bob's device") {
                await watched.model.text.hasSuffix(text)
            }
            latencies.append(ContinuousClock.now - typed)
        }
        return latencies.sorted()
    }

    /// A grantee in debt is read no further on any connection: a new one of theirs past its hello waits too, while
    /// another token of the library goes on; a debt of more than 20 s closes the connection (1013).
    @Test func aGranteeInDebtWaitsOnEveryConnection() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--changes-per-second", "10"])
        let port = fixture.server.port
        let heavy = try await fixture.token(for: "notes")
        let other = try await fixture.token(for: "notes")
        let probe = try await fixture.token(for: "notes")
        // One message of 290 changes: the burst of 100 and 19 s of debt.
        let (hand, big, first) = try Self.upload(290, to: 0xE1, port: port, token: heavy)
        let sent = ContinuousClock.now
        try await eventually(within: .seconds(10), "the big message stored") {
            try await storedSeq(of: big, device: hand, port: port, token: probe) == 290
        }
        // A new connection of the same token: its change waits for the debt.
        let (second, small, later) = try Self.upload(1, to: 0xE2, port: port, token: heavy)
        // Another token's change goes in at once.
        let (third, elsewhere, calm) = try Self.upload(1, to: 0xE3, port: port, token: other)
        try await eventually(within: .seconds(5), "another token's change") {
            try await storedSeq(of: elsewhere, device: third, port: port, token: probe) == 1
        }
        let held = try await storedSeq(of: small, device: second, port: port, token: probe)
        #expect(held == 0 || ContinuousClock.now - sent > .seconds(18), "the debt holds it")
        // The connections stay open until then: a closed one would hold nothing back.
        withExtendedLifetime((first, later, calm)) {}

        // A grantee more than 20 s in debt is closed (1013): 400 changes at 10 a second, a burst of 100.
        let (_, _, closing) = try Self.upload(400, to: 0xE4, port: port, token: try await fixture.token(for: "notes"))
        #expect(try await offThePool { closing.closeCode(within: .seconds(20)) } == 1013)
        #expect(closing.closeReason.contains("allowance"), "\(closing.closeReason)")
    }

    /// A new hand device connected to `notes` with `token`, which says hello and sends `count` changes of the
    /// document whose identity is 16 `fill` bytes, in one message.
    static func upload(_ count: Int, to fill: UInt8, port: Int, token: String) throws -> (
        device: HandDevice, document: DocumentID, socket: RawWebSocket
    ) {
        let device = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: fill, count: 16)))
        let socket = try RawWebSocket(port: port, library: "notes", token: token)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, device.hello()))
        _ = socket.socket.send(
            RawWebSocket.frame(opcode: 2, device.changes(Self.chain(of: device, in: document, count), of: document)))
        return (device, document, socket)
    }

    /// `count` changes of `device` in `document`, each on the one before.
    static func chain(of device: HandDevice, in document: DocumentID, _ count: Int) -> [Change] {
        var chain: [Change] = []
        for seq in 1...count {
            chain.append(device.change(seq: UInt64(seq), of: document, parents: chain.suffix(1), lamport: UInt64(seq)))
        }
        return chain
    }
}

/// The burst of the quota, as docs/server.md states it: ten seconds' worth.
enum ChangeQuotaBurst {
    static let seconds = 10
}

extension Duration {
    /// The duration in seconds.
    fileprivate var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
