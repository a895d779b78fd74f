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

        // The flood: 100 changes a message, as fast as the socket takes them, for five seconds.
        let hand = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xF1, count: 16)))
        let socket = try RawWebSocket(port: port, library: "notes", token: noisy)
        #expect(socket.upgraded)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        let flooding = Task {
            try await offThePool { () -> UInt64 in
                let started = ContinuousClock.now
                var parents: [Change] = []
                var sent: UInt64 = 0
                while ContinuousClock.now - started < .seconds(5) {
                    var batch: [Change] = []
                    for _ in 0..<100 {
                        let change = hand.change(seq: sent + 1, of: document, parents: parents, lamport: sent + 1)
                        batch.append(change)
                        parents = [change]
                        sent += 1
                    }
                    guard socket.socket.send(RawWebSocket.frame(opcode: 2, hand.changes(batch, of: document))) else {
                        break
                    }
                }
                return sent
            }
        }
        // Meanwhile alice types a line at a time, and each line's time to bob's screen is measured.
        try await Task.sleep(for: .milliseconds(500))
        var latencies: [Duration] = []
        for line in 0..<20 {
            let text = "line \(line)\n"
            let typed = ContinuousClock.now
            try await note.edit([.append(text)])
            try await eventually(within: .seconds(10), "line \(line) on bob's device") {
                await watched.model.text.hasSuffix(text)
            }
            latencies.append(ContinuousClock.now - typed)
        }
        let sent = try await flooding.value
        let elapsed = Duration.seconds(5)
        let stored = try await storedSeq(of: document, device: hand, port: port, token: probe)
        latencies.sort()
        let median = latencies[latencies.count / 2]
        print("noisy tenant: sent \(sent), stored \(stored); calm latency p50 \(median), max \(latencies.last!)")
        // The flood outran its allowance, and the server stored what the allowance pays for: its burst (ten
        // seconds' worth), its rate over the flood and what one pass of the probe took, and one message beyond.
        let allowed = UInt64(rate * 10) + UInt64(rate) * UInt64(elapsed.components.seconds + 10) + 100
        #expect(sent > allowed, "the flood sent \(sent), more than the \(allowed) its allowance pays for")
        #expect(stored <= allowed, "stored \(stored) of the flood's \(sent), past the \(allowed) allowed")
        #expect(stored >= UInt64(rate * 10), "the burst is stored at once: \(stored)")
        // The calm library kept its pace.
        #expect(median < .milliseconds(500), "calm latency p50 \(median)")
        #expect(latencies.last! < .seconds(5), "calm latency max \(latencies.last!)")
        await aliceSync.stop()
        await bobSync.stop()
    }
}
