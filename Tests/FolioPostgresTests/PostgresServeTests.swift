import Folio
import FolioChildProcess
import FolioClient
import FolioPostgres
import FolioTesting
import FolioToolRunner
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Real `folio serve --postgres` processes over one database, with real devices.
@Suite(.serialized) struct PostgresServeTests {
    @Test func devicesSyncThroughAServerOnPostgresAndARestartedServerLosesNothing() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        var server = try await ServerProcess.start(
            data: try directory.subdirectory("server"), arguments: ["--postgres", test.url])
        let token = try await server.token(for: "notes")
        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("kept in PostgreSQL\n")])
        try await note.commit()
        _ = try await phone.sync(through: transport(server, token))

        // Another process, another data directory (its copy of the log is new): the same library.
        await server.stop()
        server = try await ServerProcess.start(
            data: try directory.subdirectory("other server"), arguments: ["--postgres", test.url])
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        _ = try await laptop.sync(through: transport(server, token))
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        #expect(await onLaptop.model.text == "kept in PostgreSQL\n")
        await server.stop()
    }

    @Test func aChangeStoredThroughOneProcessReachesDevicesOfAnotherLive() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let servers = try await test.servers(["first", "second"], in: directory)
        let (first, second) = (servers[0], servers[1])
        let token = try await first.token(for: "notes")
        let phone = try DocumentLibrary(
            at: try directory.subdirectory("Phone"), deviceName: "Phone",
            conflictPolicy: ConflictPolicy(default: .merge))
        let laptop = try DocumentLibrary(
            at: try directory.subdirectory("Laptop"), deviceName: "Laptop",
            conflictPolicy: ConflictPolicy(default: .merge))
        let phoneSync = try await phone.startSyncing(with: first.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: second.libraryURL("notes"), token: token)
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("through the first\n")])
        try await waitFor("the note on the laptop, through the second server") {
            try await laptop.info(of: note.id) != nil
        }
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await waitFor("the text on the laptop") { await onLaptop.model.text == "through the first\n" }
        // And back: the laptop writes through the second, the phone's open document shows it.
        try await onLaptop.edit([.append("through the second\n")])
        try await waitFor("the laptop's line on the phone") {
            await note.model.text == "through the first\nthrough the second\n"
        }
        await phoneSync.stop()
        await laptopSync.stop()
        await first.stop()
        await second.stop()
    }

    @Test func aCursorShownThroughOneProcessIsSeenThroughAnotherAndGoesWithItsDevice() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let servers = try await test.servers(["first", "second"], in: directory)
        let (first, second) = (servers[0], servers[1])
        let token = try await first.token(for: "notes")
        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        let phoneSync = try await phone.startSyncing(with: first.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: second.libraryURL("notes"), token: token)
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "hello world"))
        try await waitFor("the note on the laptop") { try await laptop.info(of: note.id) != nil }
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await waitFor("the text on the laptop") { await onLaptop.model.text == "hello world" }
        try await note.setSelection(TextSelection(anchor: 6, head: 11))
        try await waitFor("the phone's selection on the laptop") {
            await onLaptop.others.contains { $0.name == "Phone" && $0.selection == TextSelection(anchor: 6, head: 11) }
        }
        // The phone's connection ends: its cursor leaves the laptop's screen, through the other process too.
        await phoneSync.stop()
        try await waitFor("the phone's cursor gone from the laptop") { await onLaptop.others.isEmpty }
        await laptopSync.stop()
        await first.stop()
        await second.stop()
    }

    @Test func aCursorShownThroughAProcessKilledLeavesTheOthersScreens() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let servers = try await test.servers(["first", "second"], in: directory)
        let (first, second) = (servers[0], servers[1])
        let token = try await first.token(for: "notes")
        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        let phoneSync = try await phone.startSyncing(with: first.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: second.libraryURL("notes"), token: token)
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "hello world"))
        try await waitFor("the note on the laptop") { try await laptop.info(of: note.id) != nil }
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await note.setSelection(TextSelection(anchor: 0, head: 5))
        try await waitFor("the phone's selection on the laptop") { await onLaptop.others.count == 1 }
        // The phone's process dies without a word: no empty state ever reaches the second process. The laptop
        // stops showing the phone once its state is 30 s old (it was renewed every 10 s until the kill).
        first.send(SIGKILL)
        let killed = ContinuousClock.now
        try await waitFor(within: .seconds(90), "the phone's cursor gone from the laptop") {
            await onLaptop.others.isEmpty
        }
        #expect(ContinuousClock.now - killed >= .seconds(19), "gone only once its state was old")
        await phoneSync.stop()
        await laptopSync.stop()
        await first.stop()
        await second.stop()
    }

    @Test func aServerWhoseDatabaseStopsSaysSoRefusesToAcknowledgeAndRecovers() async throws {
        // A cluster of this test's own: it is stopped and started again.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/postgres/cluster").path
        let started = try await offThePool { try ChildProcess.run(script, arguments: ["start"]) }
        let words = started.outputText.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        try #require(started.termination.succeeded && words.count == 2, "\(started.errorText)")
        let (url, cluster) = (words[0] + "?sslmode=disable", words[1])
        let stopped = Mutex(false)
        // Stopped off the pool at the end; only a test that failed on the way stops it here, blocking.
        defer { if !stopped.withLock({ $0 }) { _ = try? ChildProcess.run(script, arguments: ["stop", cluster]) } }
        let directory = try TemporaryDirectory()
        let server = try await ServerProcess.start(
            data: try directory.subdirectory("server"), arguments: ["--postgres", url])
        let token = try await server.token(for: "notes")
        #expect(try await health(server).status == 200)

        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("before\n")])
        try await note.commit()
        _ = try await phone.sync(through: transport(server, token))

        _ = try await offThePool { try ChildProcess.run(script, arguments: ["pause", cluster]) }
        try await waitFor("/health to say the database is down") {
            let answer = try await health(server)
            return answer.status == 503 && answer.body.contains("PostgreSQL")
        }
        #expect(try await storageOutages(server) > 0)
        try await note.edit([.append("while the database is down\n")])
        try await note.commit()
        // The sync does not end with the change acknowledged: the server cannot store it.
        let during = try? await phone.sync(through: transport(server, token))
        #expect(during == nil, "a sync whose changes the server cannot store fails")

        _ = try await offThePool { try ChildProcess.run(script, arguments: ["resume", cluster]) }
        try await waitFor(within: .seconds(60), "/health to recover") { try await health(server).status == 200 }
        _ = try await phone.sync(through: transport(server, token))
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        _ = try await laptop.sync(through: transport(server, token))
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        #expect(await onLaptop.model.text == "before\nwhile the database is down\n")
        await server.stop()
        _ = try await offThePool { try ChildProcess.run(script, arguments: ["stop", cluster]) }
        stopped.withLock { $0 = true }
    }

    /// Its waits are long: it runs beside the whole suite, and what it proves is that the process recovers, not how
    /// fast.
    @Test func aProcessWhoseDatabaseConnectionsHangListensAgainAndCatchesItsDevicesUp() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        let second = try await ServerProcess.start(
            data: try directory.subdirectory("second"), arguments: ["--postgres", test.url])
        let token = try await second.token(for: "notes")
        try await waitFor(within: .seconds(60), "the second process up") { try await health(second).status == 200 }
        // Every connection the second process holds now, its listeners' among them.
        let hung = try await test.backends()
        try #require(!hung.isEmpty)
        let first = try await ServerProcess.start(
            data: try directory.subdirectory("first"), arguments: ["--postgres", test.url])
        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        let phoneSync = try await phone.startSyncing(with: first.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: second.libraryURL("notes"), token: token)
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("before\n")])
        try await waitFor(within: .seconds(60), "the note on the laptop") { try await laptop.info(of: note.id) != nil }
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await waitFor(within: .seconds(60), "the text on the laptop") { await onLaptop.model.text == "before\n" }

        // Those connections stop answering, without a reset (as across a network that dropped them): the second
        // process says so, listens on other connections and catches the laptop up with what it missed meanwhile.
        for pid in hung { kill(pid, SIGSTOP) }
        defer { for pid in hung { kill(pid, SIGCONT) } }
        try await note.edit([.append("while the second's connections hang\n")])
        // It listens again at once on a new connection, so `/health` says 503 for a moment only: the outage it
        // counts stays.
        try await waitFor(within: .seconds(60), "the second process to count the outage of its listeners") {
            try await storageOutages(second) > 0
        }
        try await waitFor(within: .seconds(60), "the edit on the laptop, through the second process") {
            await onLaptop.model.text == "before\nwhile the second's connections hang\n"
        }
        try await waitFor(within: .seconds(60), "/health to recover") { try await health(second).status == 200 }
        try await note.edit([.append("after\n")])
        try await waitFor(within: .seconds(60), "a later edit on the laptop") {
            await onLaptop.model.text == "before\nwhile the second's connections hang\nafter\n"
        }
        await phoneSync.stop()
        await laptopSync.stop()
        await first.stop()
        await second.stop()
    }

    private func transport(_ server: ServerProcess, _ token: String) throws -> WebSocketTransport {
        WebSocketTransport(
            endpoint: try ServerEndpoint(url: server.libraryURL("notes"), token: token))
    }

    /// `folio_storage_outages_total` of the server's `/metrics`.
    private func storageOutages(_ server: ServerProcess) async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: URL(string: server.base + "/metrics")!)
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first {
            $0.hasPrefix("folio_storage_outages_total ")
        }
        return try #require(line.flatMap { Int($0.split(separator: " ").last ?? "") })
    }

    private func health(_ server: ServerProcess) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: server.base + "/health")!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
func waitFor(
    within timeout: Duration = .seconds(30), _ what: String, _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if (try? await condition()) == true { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    if try await condition() { return }
    Issue.record("timed out after \(timeout) waiting for \(what)")
    throw CancellationError()
}
