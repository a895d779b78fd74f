import Folio
import FolioClient
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Libraries syncing through a real `folio serve`.
@Suite struct LiveSyncTests {
    @Test func anEditReachesAnotherDevicesOpenDocumentByItself() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let phoneSync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the phone\n")])
        // The laptop hears of the new note, opens it; later edits show in its open document with no call of its own.
        var seen: DocumentID?
        try await eventually("the note to reach the laptop") {
            seen = try await laptop.documents().first { $0.displayName == "Plan" }?.id
            return seen != nil
        }
        let onLaptop = try await laptop.open(try #require(seen), as: TextDocument.self)
        try await eventually("the first line on the laptop") { await onLaptop.model.text == "from the phone\n" }
        try await note.edit([.append("second line\n")])
        try await eventually("the second line on the laptop") {
            await onLaptop.model.text == "from the phone\nsecond line\n"
        }
        try await onLaptop.edit([.append("from the laptop\n")])
        try await eventually("the laptop's line on the phone") {
            await note.model.text == "from the phone\nsecond line\nfrom the laptop\n"
        }
        await phoneSync.stop()
        await laptopSync.stop()
    }

    /// While a library syncs live, a keystroke leaves as it is made (`AutosavePolicy.liveCommitDelay`) rather than when
    /// its undo group ends, and the group stays one undo step, whose undo syncs. (How soon it shows is measured by
    /// `Tools/bench/run live-typing`.)
    @Test func keystrokesReachAnotherScreenBeforeTheirUndoGroupEnds() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        // Undo groups of a minute, ended by `commit()` below, and no autosave (a save commits the group): the
        // keystrokes can reach the laptop only as they are typed, not with their group.
        let phone = try DocumentLibrary(
            at: fixture.directory.subdirectory("Phone"), deviceName: "Phone",
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, groupingInterval: 60_000),
            conflictPolicy: ConflictPolicy(default: .merge))
        let laptop = try fixture.library("Laptop")
        let phoneSync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let laptopSync = try await laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        #expect(laptop.syncsLive)
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "> "))
        try await eventually("the note on the laptop") { try await laptop.info(of: note.id) != nil }
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await eventually("the note's text on the laptop") { await onLaptop.model.text == "> " }
        // Ten keystrokes 50 ms apart, as a person types: one undo group, still open when they show on the laptop.
        for letter in "abcdefghij" {
            try await note.edit(.append(String(letter)))
            try await Task.sleep(for: .milliseconds(50))
        }
        try await eventually(within: .seconds(40), "the keystrokes on the laptop, their group open") {
            await onLaptop.model.text == "> abcdefghij"
        }
        // The ten keystrokes, committed as several changes, are one undo step; its undo reaches the laptop too.
        try await note.commit()
        try await note.undo()
        #expect(await note.model.text == "> ")
        try await eventually("the undo on the laptop") { await onLaptop.model.text == "> " }
        await phoneSync.stop()
        await laptopSync.stop()
        #expect(!phone.syncsLive)
    }

    @Test func libraryEventsSayWhatArrived() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("one\n")])
        let laptopSync = try await laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let phoneSync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let events = try await firstEvent(of: laptopSync, "the note on the laptop") { event in
            if case .documentAdded(_, let name) = event { return name == "Plan" }
            return false
        }
        #expect(events.contains(.connection(.connected)))
        #expect(events.contains(.syncStarted))
        try await phone.rename(note.id, to: "Plans")
        let id = note.id
        _ = try await firstEvent(of: laptopSync, "the rename on the laptop") {
            $0 == .documentRenamed(id, from: "Plan", to: "Plans")
        }
        await phoneSync.stop()
        await laptopSync.stop()
    }

    @Test func conflictsThatArriveAndTheirSettlementAreEvents() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let url = fixture.server.libraryURL("notes")
        let phone = try fixture.library("Phone", policy: ConflictPolicy(default: .askUser))
        let laptop = try fixture.library("Laptop", policy: ConflictPolicy(default: .askUser))
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "a\n"))
        let endpoint = try ServerEndpoint(url: url, token: token)
        try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        try await laptop.sync(through: WebSocketTransport(endpoint: endpoint))
        // Both change the one line while apart: the phone live, the laptop offline until it connects.
        let phoneSync = try await phone.startSyncing(with: url, token: token)
        let onLaptop = try await laptop.open(note.id, as: TextDocument.self)
        try await onLaptop.edit([.replace("laptop\n")])
        try await note.edit([.replace("phone\n")])
        let laptopSync = try await laptop.startSyncing(with: url, token: token)
        let id = note.id
        _ = try await firstEvent(of: laptopSync, "the conflict on the laptop") { $0 == .conflictAppeared(id) }
        _ = try await firstEvent(of: phoneSync, "the conflict on the phone") { $0 == .conflictAppeared(id) }
        #expect(await onLaptop.state.contains(.inConflict))
        #expect(await note.state.contains(.inConflict))
        // The person keeps the laptop's version; the phone hears of the settlement.
        let laptops = try #require(try await onLaptop.versions().first { $0.savingDevice.name == "Laptop" })
        try await onLaptop.replace(with: laptops)
        _ = try await firstEvent(of: phoneSync, "the settlement on the phone") { $0 == .conflictResolved(id) }
        try await eventually("the phone to show the laptop's version") { await note.model.text == "laptop\n" }
        await laptopSync.stop()
        await phoneSync.stop()
    }

    /// A document in the local container never reaches the server over a live connection; moved to shared it goes
    /// with its history; moved back to local, its later changes stay on the device.
    @Test func aLiveConnectionKeepsLocalDocumentsOnTheDevice() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let url = fixture.server.libraryURL("notes")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let phoneSync = try await phone.startSyncing(with: url, token: token)
        let laptopSync = try await laptop.startSyncing(with: url, token: token)
        let secret = try await phone.create(TextDocument.self, named: "Diary", contents: TextDocument(text: "mine\n"))
        try await secret.edit([.append("still mine\n")])
        // A shared document made after it arrives, so the local one had every chance to leak.
        let shared = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await eventually("the shared note on the laptop") { try await laptop.info(of: shared.id) != nil }
        #expect(try await laptop.info(of: secret.id) == nil)
        let endpoint = try ServerEndpoint(url: url, token: token)
        let probe = try ChangeLogStore(inMemoryNamed: "probe-\(UUID())", key: DeviceKey(), deviceName: "probe")
        _ = try await WebSocketTransport(endpoint: endpoint).sync(probe)
        #expect(try probe.vector(of: secret.id).isEmpty, "the server holds nothing of the local document")

        try await phone.move(secret.id, to: .shared)
        try await eventually("the diary on the laptop") { try await laptop.info(of: secret.id) != nil }
        let onLaptop = try await laptop.open(secret.id, as: TextDocument.self)
        try await eventually("its history on the laptop") { await onLaptop.model.text == "mine\nstill mine\n" }

        try await phone.move(secret.id, to: .local)
        try await secret.edit([.append("after\n")])
        try await onLaptop.edit([.append("laptop\n")])
        try await shared.edit([.append("sync goes on\n")])
        let planOnLaptop = try await laptop.open(shared.id, as: TextDocument.self)
        try await eventually("the shared note's edit on the laptop") {
            await planOnLaptop.model.text == "sync goes on\n"
        }
        #expect(await onLaptop.model.text == "mine\nstill mine\nlaptop\n")
        #expect(await secret.model.text == "mine\nstill mine\nafter\n")
        await phoneSync.stop()
        await laptopSync.stop()
    }

    /// A token the server refuses (unknown or revoked: 4401; of another library: 4403) will not become valid by
    /// waiting: the sync stops after the refusal instead of retrying forever.
    @Test(arguments: ["unknown token", "token of another library"])
    func aRefusedTokenStopsTheSyncInsteadOfRetrying(case refusal: String) async throws {
        let fixture = try await ServerFixture.start()
        let token =
            refusal == "unknown token"
            ? "folio_" + String(repeating: "0", count: 64) : try await fixture.token(for: "photos")
        let phone = try fixture.library("Phone")
        let sync = try await phone.startSyncing(
            with: fixture.server.libraryURL("notes"), token: token,
            backoff: Backoff(initial: .milliseconds(5), maximum: .milliseconds(20)))
        let events = try await firstEvent(of: sync, "the sync to stop by itself") { $0 == .connection(.stopped) }
        let attempts = events.filter { if case .connection(.connecting) = $0 { true } else { false } }.count
        // One attempt: the server sends its close only once the client's first frame shows it took the upgrade's
        // answer (a close in the same read as the answer used to be lost, and the client tried again 10 s later).
        #expect(attempts == 1, "stopped after \(attempts) attempts")
        let expected: UInt16 = refusal == "unknown token" ? 4401 : 4403
        #expect(
            events.contains { event in
                if case .connection(.refused(let code, _)) = event { return code == expected }
                return false
            }, "\(events)")
        // The stream ended by itself: nothing follows the stop.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in sync.events { return false }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "the events went on after the refusal")
        #expect(!phone.syncsLive, "a sync that stopped by itself is no longer counted live")
        await sync.stop()
        #expect(!phone.syncsLive)
    }

    @Test func aOneShotWebSocketSyncExchangesWhatEachLacks() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token)
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("one\n")])
        let sent = try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(sent.isComplete)
        #expect(sent.changesSent >= 2)
        let received = try await laptop.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(received.isComplete)
        let onLaptop = try await laptop.open(named: "Plan", as: TextDocument.self)
        #expect(await onLaptop.model.text == "one\n")
    }

    /// Two libraries in two processes: this one, and the README's client example in a process of its own.
    @Test func twoProcessesSyncLiveThroughTheServer() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let example = try ToolProcess.start(
            [
                try fixture.directory.subdirectory("laptop").path, fixture.server.libraryURL("notes").absoluteString,
                token,
            ],
            executable: try Self.example())
        defer { example.send(SIGKILL) }
        let phone = try fixture.library("Phone")
        let sync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        // Created with its text, so that the other process's line follows it rather than competing with it.
        let note = try await phone.create(
            TextDocument.self, named: "Plan", in: .shared, contents: TextDocument(text: "from the phone\n"))
        // The other process signs the note; its line arrives here by itself.
        do {
            try await eventually(within: .seconds(20), "the laptop's line on the phone") {
                await note.model.text == "from the phone\nseen on the laptop\n"
            }
        } catch {
            example.send(SIGTERM)
            let run = await example.finish()
            Issue.record("the example printed \(run.output) \(run.errors); the phone shows \(await note.model.text)")
            throw error
        }
        await sync.stop()
        example.send(SIGTERM)
        _ = await example.finish()
        // The other process's library holds the same text.
        let laptop = try DocumentLibrary(at: try fixture.directory.subdirectory("laptop"), deviceName: "Laptop")
        let onLaptop = try await laptop.open(named: "Plan", as: TextDocument.self)
        #expect(await onLaptop.model.text == "from the phone\nseen on the laptop\n")
    }

    /// The built LiveSyncExample, next to the built `folio`.
    static func example() throws -> URL {
        let folio = try FolioExecutable.locate().get()
        return folio.deletingLastPathComponent().appendingPathComponent("LiveSyncExample")
    }
}
