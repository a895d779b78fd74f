import Folio
import FolioClient
import FolioPostgres
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// `folio serve export` and `import`: a library moved from PostgreSQL to a data directory and back, by the tool, with
/// real servers on each side.
@Suite(.serialized) struct PostgresTransferTests {
    @Test func aLibraryMovesFromPostgresToADataDirectoryAndBackWithEverything() async throws {
        let test = try await TestPostgres.fresh()
        let directory = try TemporaryDirectory()
        // A library on PostgreSQL: a text and a book with an image kept as a blob.
        let onPostgres = try await ServerProcess.start(
            data: try directory.subdirectory("postgres server"), arguments: ["--postgres", test.url])
        let token = try await onPostgres.token(for: "notes")
        let phone = try DocumentLibrary(at: try directory.subdirectory("Phone"), deviceName: "Phone")
        let note = try await phone.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("moved twice\n")])
        try await note.commit()
        let image = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 5) })
        let book = try await phone.create(
            PagesDocument.self, named: "Trip", in: .shared,
            contents: try PagesDocument(text: "Day 1", images: ["map.png": image]))
        let live = try await phone.startSyncing(with: onPostgres.libraryURL("notes"), token: token)
        try await waitFor("the image stored in PostgreSQL") { try await test.count("folio_blob") == 1 }
        await live.stop()
        await onPostgres.stop()

        // Exported by the tool; the file checks.
        let file = directory.file("notes.folio")
        let export = try await ToolRun.folio([
            "serve", "export", "--library", "notes", "--to", file.path, "--postgres", test.url,
        ])
        #expect(export.status == 0, "\(export.errors)")
        #expect(export.output.contains("1 blob"), "\(export.output)")
        let verify = try await ToolRun.folio(["log", "verify", file.path])
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
        let again = try await ToolRun.folio([
            "serve", "export", "--library", "notes", "--to", file.path, "--postgres", test.url,
        ])
        #expect(again.status == 2, "an existing file is not overwritten")
        let unknown = try await ToolRun.folio([
            "serve", "export", "--library", "nothing", "--to", directory.file("x").path, "--postgres", test.url,
        ])
        #expect(unknown.status == 2 && unknown.errors.contains("no library"))

        // Imported into a data directory, served by a server on SQLite: a new device gets everything.
        let data = try directory.subdirectory("sqlite server")
        let imported = try await ToolRun.folio([
            "serve", "import", "--library", "notes", "--from", file.path, "--data", data.path,
        ])
        #expect(imported.status == 0, "\(imported.errors)")
        let onSQLite = try await ServerProcess.start(data: data)
        let sqliteToken = try await onSQLite.token(for: "notes")
        let laptop = try DocumentLibrary(at: try directory.subdirectory("Laptop"), deviceName: "Laptop")
        _ = try await laptop.sync(through: transport(onSQLite, sqliteToken))
        #expect(await (try laptop.open(note.id, as: TextDocument.self)).model.text == "moved twice\n")
        #expect(await (try laptop.open(book.id, as: PagesDocument.self)).model.images["map.png"] == image)
        await onSQLite.stop()

        // And back into a new PostgreSQL database, from the data directory, by the same two commands.
        let back = try await TestPostgres.fresh()
        let second = directory.file("notes-again.folio")
        let exportAgain = try await ToolRun.folio([
            "serve", "export", "--library", "notes", "--to", second.path, "--data", data.path,
        ])
        #expect(exportAgain.status == 0, "\(exportAgain.errors)")
        let importBack = try await ToolRun.folio([
            "serve", "import", "--library", "notes", "--from", second.path, "--postgres", back.url,
        ])
        #expect(importBack.status == 0, "\(importBack.errors)")
        let onPostgresAgain = try await ServerProcess.start(
            data: try directory.subdirectory("postgres server 2"), arguments: ["--postgres", back.url])
        let backToken = try await onPostgresAgain.token(for: "notes")
        let tablet = try DocumentLibrary(at: try directory.subdirectory("Tablet"), deviceName: "Tablet")
        _ = try await tablet.sync(through: transport(onPostgresAgain, backToken))
        #expect(await (try tablet.open(note.id, as: TextDocument.self)).model.text == "moved twice\n")
        #expect(await (try tablet.open(book.id, as: PagesDocument.self)).model.images["map.png"] == image)
        await onPostgresAgain.stop()
    }

    private func transport(_ server: ServerProcess, _ token: String) throws -> WebSocketTransport {
        WebSocketTransport(endpoint: try ServerEndpoint(url: server.libraryURL("notes"), token: token))
    }
}
