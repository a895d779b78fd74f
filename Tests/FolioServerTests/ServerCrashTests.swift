import Folio
import FolioClient
import FolioCore
import FolioStore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Synchronization
import Testing

/// A real `folio serve` process killed (SIGKILL) while devices sync, and a device's process killed and started again.
@Suite(.serialized) struct ServerCrashTests {
    /// What the server acknowledged to the phone, per document: the union of the notices it sent.
    final class Acknowledged: Sendable {
        private let vectors = Mutex<[DocumentID: VersionVector]>([:])
        /// The phone's connection events, with their time, for a failure's message.
        let events = Mutex<[String]>([])

        func note(_ event: ServerSyncEvent) {
            let line = "\(ContinuousClock.now) \(event)"
            events.withLock { $0.append(line) }
        }

        func record(_ document: DocumentID, _ vector: VersionVector) {
            vectors.withLock { $0[document] = ($0[document] ?? VersionVector()).merging(vector) }
        }

        var snapshot: [DocumentID: VersionVector] { vectors.withLock { $0 } }
    }

    /// While the phone appends line after line and the laptop listens, the server is killed at seeded random moments
    /// and started again on the same port and data. Every change it acknowledged before a kill is in its log after
    /// the restart; at the end both devices show the same text, each line once.
    @Test(arguments: [0, 1, 2]) func everyAcknowledgedChangeSurvivesAKillAndDevicesConverge(round: Int) async throws {
        let seed = TestSeed.make() &+ UInt64(round)
        var random = SplitMix64(seed: seed)
        let directory = try TemporaryDirectory()
        let data = try directory.subdirectory("server")
        // The server gives a connection a minute to say hello, not 10 s: under the whole suite, the test's own
        // clients (the probe's one-shot sync) can wait that long for a thread, and the hello bound is not what this
        // test is about (ConnectionHardeningTests proves it).
        let patient = ["--hello-timeout", "60"]
        var server = try await ServerProcess.start(data: data, arguments: patient)
        let port = server.port
        defer { server.send(SIGKILL) }
        let token = try await server.token(for: "notes")
        let endpoint = try ServerEndpoint(url: server.libraryURL("notes"), token: token)
        let quick = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200))

        let phone = try DocumentLibrary(at: directory.subdirectory("phone"), deviceName: "Phone")
        let laptop = try DocumentLibrary(at: directory.subdirectory("laptop"), deviceName: "Laptop")
        let note = try await phone.create(TextDocument.self, named: "Log", in: .shared)
        let acknowledged = Acknowledged()
        let phoneSync = LiveSync(store: phone.store, endpoint: endpoint, backoff: quick, seed: seed) { event in
            if case .acknowledged(let document, let vector) = event {
                acknowledged.record(document, vector)
            } else {
                acknowledged.note(event)
            }
        }
        let laptopEvents = Acknowledged()
        let laptopSync = LiveSync(store: laptop.store, endpoint: endpoint, backoff: quick, seed: seed &+ 1) { event in
            laptopEvents.note(event)
            if case .received(let documents) = event { try? await laptop.refreshOpenDocuments(documents) }
        }

        let lines = 120
        let writer = Task {
            for line in 0..<lines {
                try await note.edit([.append("line \(line)\n")])
                try await Task.sleep(for: .milliseconds(4))
            }
        }
        for kill in 0..<3 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 60...250, using: &random)))
            await server.stop()
            let before = acknowledged.snapshot
            server = try await ServerProcess.start(data: data, port: port, arguments: patient)
            // What the server acknowledged is in its log: a probe that syncs now receives all of it.
            let probe = try ChangeLogStore(
                inMemoryNamed: "probe-\(seed)-\(kill)", key: DeviceKey(), deviceName: "probe")
            try await Self.sync(probe, with: endpoint, seed: seed)
            for (document, vector) in before.sorted(by: { $0.key < $1.key }) {
                let stored = try probe.vector(of: document)
                #expect(
                    vector.isContained(in: stored),
                    "seed \(seed), kill \(kill): acknowledged \(vector), stored \(stored)")
            }
        }
        try await writer.value
        let expected = (0..<lines).map { "line \($0)\n" }.joined()
        #expect(await note.model.text == expected, "seed \(seed)")
        do {
            try await eventually(within: .seconds(60), "seed \(seed): the laptop to converge") {
                guard try await laptop.info(of: note.id) != nil else { return false }
                return await (try laptop.open(note.id, as: TextDocument.self)).model.text == expected
            }
        } catch {
            let probe = try ChangeLogStore(inMemoryNamed: "probe-\(seed)-end", key: DeviceKey(), deviceName: "probe")
            let report = try? await WebSocketTransport(endpoint: endpoint).sync(probe)
            let finished = server
            let serverLog = try await offThePool { () -> String in
                finished.send(SIGTERM)
                return finished.wait().errors
            }
            let serverStore = try ChangeLogStore(
                at: data.appendingPathComponent("libraries/notes.sqlite"), key: DeviceKey(), deviceName: "inspector")
            let waiting = try serverStore.pendingChanges(of: note.id).map(\.id.seq)
            let logged = try serverStore.changes(of: note.id).filter { $0.id.device == phone.device.id }.map(\.id.seq)
            Issue.record(
                "the server's waiting changes: \(waiting); its vector \(try serverStore.vector(of: note.id)); the phone's changes it holds: \(logged.count), the last \(logged.suffix(3)), verify: \(try serverStore.verify().isSound)"
            )
            Issue.record(
                "the server's log ends: \(serverLog.split(separator: "\n").suffix(15).joined(separator: "\n"))")
            Issue.record(
                "phone \(try phone.store.vector(of: note.id)), laptop \(try laptop.store.vector(of: note.id)), server \(try probe.vector(of: note.id)) (\(report.map { "\($0)" } ?? "probe failed")); phone's events: \(acknowledged.events.withLock { $0 }.suffix(30).joined(separator: "; ")); the laptop's: \(laptopEvents.events.withLock { $0 }.suffix(30).joined(separator: "; "))"
            )
            throw error
        }
        #expect(!acknowledged.snapshot.isEmpty, "seed \(seed): the server acknowledged nothing")
        await phoneSync.stop()
        await laptopSync.stop()
    }

    /// Syncs `probe` once, trying again (as a device would) when connecting fails: on a loaded machine a connect can
    /// time out just after the restart. Any other failure, or a third failed connect, fails the test.
    static func sync(_ probe: ChangeLogStore, with endpoint: ServerEndpoint, seed: UInt64) async throws {
        for attempt in 1...3 {
            do {
                _ = try await WebSocketTransport(endpoint: endpoint).sync(probe)
                return
            } catch  where attempt < 3 && "\(error)".contains("cannot connect") {
                print("seed \(seed): the probe's sync, attempt \(attempt), failed: \(error)")
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// The README's client in a process of its own is killed (SIGKILL) and started again: it resumes from its
    /// library, receives what it missed, and signs each note once.
    @Test func aKilledDeviceProcessResumesAndNothingIsDuplicated() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let url = fixture.server.libraryURL("notes")
        let laptopDirectory = try fixture.directory.subdirectory("laptop")
        func startLaptop() throws -> ToolProcess {
            try ToolProcess.start(
                [laptopDirectory.path, url.absoluteString, token], executable: try LiveSyncTests.example())
        }
        let phone = try fixture.library("Phone")
        let sync = try await phone.startSyncing(with: url, token: token)
        var laptop = try startLaptop()
        let first = try await phone.create(
            TextDocument.self, named: "First", in: .shared, contents: TextDocument(text: "one\n"))
        try await eventually("the laptop to sign the first note") {
            await first.model.text == "one\nseen on the laptop\n"
        }
        laptop.send(SIGKILL)
        _ = await laptop.finish()
        // Written while the laptop is down.
        try await first.edit([.append("two\n")])
        let second = try await phone.create(
            TextDocument.self, named: "Second", in: .shared, contents: TextDocument(text: "three\n"))
        laptop = try startLaptop()
        defer { laptop.send(SIGKILL) }
        try await eventually("the laptop to sign the second note") {
            await second.model.text == "three\nseen on the laptop\n"
        }
        laptop.send(SIGKILL)
        _ = await laptop.finish()
        let onLaptop = try DocumentLibrary(at: laptopDirectory, deviceName: "Laptop")
        #expect(
            await (try onLaptop.open(first.id, as: TextDocument.self)).model.text == "one\nseen on the laptop\ntwo\n")
        #expect(await first.model.text == "one\nseen on the laptop\ntwo\n")
        #expect(await (try onLaptop.open(second.id, as: TextDocument.self)).model.text == "three\nseen on the laptop\n")
        await sync.stop()
    }
}
