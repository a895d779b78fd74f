import Folio
import FolioClient
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
        let phoneSync = try phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let laptopSync = try laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("from the phone\n")])
        // The laptop hears of the new note, opens it; later edits show in its open document with no call of its own.
        var seen: DocumentID?
        try await eventually("the note to reach the laptop") {
            seen = try laptop.documents().first { $0.displayName == "Plan" }?.id
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

    @Test func libraryEventsSayWhatArrived() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("one\n")])
        let laptopSync = try laptop.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        let phoneSync = try phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        var events: [LibraryEvent] = []
        for await event in laptopSync.events {
            events.append(event)
            if case .documentAdded(_, let name) = event, name == "Plan" { break }
        }
        #expect(events.contains(.connection(.connected)))
        #expect(events.contains(.syncStarted))
        try phone.rename(note.id, to: "Plans")
        var renamed = false
        for await event in laptopSync.events {
            if case .documentRenamed(let id, let from, let to) = event {
                #expect(id == note.id && from == "Plan" && to == "Plans")
                renamed = true
                break
            }
        }
        #expect(renamed)
        await phoneSync.stop()
        await laptopSync.stop()
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
        let sync = try phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
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
