import Folio
import FolioClient
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// The server's data directory on disk, with a real `folio serve`: how library files are named, who may read them,
/// and that one server at a time uses it.
@Suite struct DataDirectoryTests {
    /// The names of the library databases in `data` (not their `-wal`, `-shm`).
    static func libraryFiles(in data: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("libraries").path)
            .filter { $0.hasSuffix(".sqlite") }.sorted()
    }

    /// The permission bits of `url`.
    static func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (try #require(attributes[.posixPermissions] as? NSNumber)).intValue & 0o777
    }

    /// A device's library with one shared note holding `text`, synced through `endpoint`; the note's identity.
    static func pushNote(
        _ text: String, from library: DocumentLibrary, through endpoint: ServerEndpoint
    ) async throws -> DocumentID {
        let note = try await library.create(
            TextDocument.self, named: "Note", in: .shared, contents: TextDocument(text: text))
        try await library.sync(through: WebSocketTransport(endpoint: endpoint))
        return note.id
    }

    /// What the server holds of `document` in the library `endpoint` names, as a new device syncing now sees it.
    static func vector(of document: DocumentID, through endpoint: ServerEndpoint) async throws -> VersionVector {
        let probe = try ChangeLogStore(inMemoryNamed: "probe-\(UUID())", key: DeviceKey(), deviceName: "probe")
        _ = try await WebSocketTransport(endpoint: endpoint).sync(probe)
        return try probe.vector(of: document)
    }

    /// `alpha` and `ALPHA` are two libraries (of two accounts): their files must differ in more than case, or a
    /// case-insensitive file system (macOS's default) would give both one file.
    @Test func librariesWhoseNamesDifferOnlyInCaseGetFilesThatDifferInAnyCase() async throws {
        let fixture = try await ServerFixture.start()
        let lower = try ServerEndpoint(
            url: fixture.server.libraryURL("alpha"), token: try await fixture.token(for: "alpha", account: "one"))
        let upper = try ServerEndpoint(
            url: fixture.server.libraryURL("ALPHA"), token: try await fixture.token(for: "ALPHA", account: "two"))
        let inLower = try await Self.pushNote("lower\n", from: try fixture.library("Lower"), through: lower)
        let inUpper = try await Self.pushNote("upper\n", from: try fixture.library("Upper"), through: upper)

        let files = try Self.libraryFiles(in: fixture.server.data)
        #expect(files.count == 2, "\(files)")
        #expect(Set(files.map { $0.lowercased() }).count == 2, "two files whose names differ only in case: \(files)")
        #expect(try await !Self.vector(of: inLower, through: lower).isEmpty)
        #expect(try await Self.vector(of: inUpper, through: lower).isEmpty, "alpha holds nothing of ALPHA")
        #expect(try await !Self.vector(of: inUpper, through: upper).isEmpty)
        #expect(try await Self.vector(of: inLower, through: upper).isEmpty, "ALPHA holds nothing of alpha")
    }

    /// A data directory of an earlier version keeps library `NAME` in `libraries/NAME.sqlite`: the server moves it
    /// (with its `-wal`, which holds what was committed since the last checkpoint) to its new name when it first opens
    /// the library, and serves everything in it.
    @Test func aLibraryFileOfTheOldLayoutIsMovedToItsNewNameAndStillServed() async throws {
        let fixture = try await ServerFixture.start()
        let data = fixture.server.data
        let endpoint = try ServerEndpoint(
            url: fixture.server.libraryURL("Notes"), token: try await fixture.token(for: "Notes"))
        let phone = try fixture.library("Phone")
        let note = try await Self.pushNote("kept\n", from: phone, through: endpoint)
        let stored = try await Self.vector(of: note, through: endpoint)
        #expect(!stored.isEmpty)
        // Killed, so that the last commits are still in the -wal: it must move with the database.
        await fixture.server.stop()
        let libraries = data.appendingPathComponent("libraries")
        let current = try #require(try Self.libraryFiles(in: data).first)
        let companions = try FileManager.default.contentsOfDirectory(atPath: libraries.path).filter {
            $0.hasPrefix(current)
        }
        #expect(companions.contains(current + "-wal"), "the killed server left its -wal: \(companions)")
        for file in companions {
            let old = "Notes.sqlite" + file.dropFirst(current.count)
            guard old != file else { continue }
            try FileManager.default.moveItem(
                at: libraries.appendingPathComponent(file), to: libraries.appendingPathComponent(old))
        }

        let server = try await ServerProcess.start(data: data)
        defer { server.kill() }
        let moved = try ServerEndpoint(url: server.libraryURL("Notes"), token: endpoint.token)
        #expect(try await Self.vector(of: note, through: moved) == stored)
        let files = try FileManager.default.contentsOfDirectory(atPath: libraries.path)
        #expect(!files.contains { $0.hasPrefix("Notes.sqlite") }, "the old name is gone: \(files)")
        #expect(try Self.libraryFiles(in: data).count == 1, "\(files)")
    }

    /// The data directory holds token hashes, every document and the server's keys: only its owner may read it.
    @Test func aNewDataDirectoryAndItsDatabasesAreTheOwnersOnly() async throws {
        let directory = try TemporaryDirectory()
        // The token command, which an operator runs first, creates the directory as the server does.
        let first = directory.file("issued")
        _ = try await offThePool { try ServerProcess.token(for: "notes", data: first) }
        #expect(try Self.mode(of: first) == 0o700)
        #expect(try Self.mode(of: first.appendingPathComponent("accounts.sqlite")) == 0o600)

        let data = directory.file("served")
        let server = try await ServerProcess.start(data: data)
        defer { server.kill() }
        #expect(try Self.mode(of: data) == 0o700)
        #expect(try Self.mode(of: data.appendingPathComponent("libraries")) == 0o700)
        #expect(try Self.mode(of: data.appendingPathComponent("accounts.sqlite")) == 0o600)
        let endpoint = try ServerEndpoint(url: server.libraryURL("notes"), token: try await server.token(for: "notes"))
        let library = try DocumentLibrary(at: try directory.subdirectory("phone"), deviceName: "Phone")
        _ = try await Self.pushNote("private\n", from: library, through: endpoint)
        let libraries = data.appendingPathComponent("libraries")
        let files = try FileManager.default.contentsOfDirectory(atPath: libraries.path)
        #expect(!files.isEmpty)
        for file in files {
            #expect(try Self.mode(of: libraries.appendingPathComponent(file)) == 0o600, "\(file)")
        }
    }

    /// An existing data directory that others may read is served, with a warning in the log.
    @Test func aDataDirectoryOthersMayReadIsServedWithAWarning() async throws {
        let directory = try TemporaryDirectory()
        let data = try directory.subdirectory("data")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: data.path)
        let server = try await ServerProcess.start(data: data)
        server.send(SIGTERM)
        let run = try await offThePool { server.wait() }
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains("open to group or others"), "\(run.errors)")
        #expect(try Self.mode(of: data) == 0o755, "the server does not change an operator's directory")
    }

    /// A second server on the data directory of a running one would fail every library (each log is held
    /// exclusively): it exits at once, saying which directory and which process holds it, and the first goes on.
    @Test func aSecondServerOnTheSameDataDirectoryExitsAndTheFirstGoesOn() async throws {
        let fixture = try await ServerFixture.start()
        let data = fixture.server.data
        let second = try ToolProcess.start(["serve", "--port", "0", "--data", data.path])
        let deadline = ContinuousClock.now + .seconds(20)
        while second.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if second.isRunning {
            second.send(SIGKILL)
            Issue.record("the second server still runs after 20 s")
        }
        let run = await second.finish()
        #expect(run.status != 0)
        #expect(!run.output.contains("listening"), "\(run.output)")
        #expect(run.errors.contains(data.path), "\(run.errors)")
        #expect(run.errors.contains("pid \(fixture.server.processIdentifier)"), "\(run.errors)")

        // The first still serves, and tokens can still be issued beside it.
        let endpoint = try ServerEndpoint(
            url: fixture.server.libraryURL("notes"), token: try await fixture.token(for: "notes"))
        let note = try await Self.pushNote("still here\n", from: try fixture.library("Phone"), through: endpoint)
        #expect(try await !Self.vector(of: note, through: endpoint).isEmpty)
    }
}
