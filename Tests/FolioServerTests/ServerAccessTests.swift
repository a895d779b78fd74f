import Folio
import FolioServer
import FolioTesting
import FolioToolRunner
import Foundation
import GRDB
import Testing

/// Who may reach what on a running `folio serve`.
@Suite struct ServerAccessTests {
    @Test func healthAndMetricsAnswerWithoutAToken() async throws {
        let fixture = try await ServerFixture.start()
        let health = try await fixture.get("/health")
        #expect(health.status == 200)
        #expect(health.body == "ok\n")
        let metrics = try await fixture.get("/metrics")
        #expect(metrics.status == 200)
        for name in ["folio_connections_opened_total", "folio_changes_in_total", "folio_bytes_in_total"] {
            #expect(metrics.body.contains(name), "metrics lack \(name)")
        }
    }

    @Test func aSyncRequestNeedsAValidTokenOfItsLibrary() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let other = try await fixture.token(for: "photos", account: "someone-else")
        #expect(try await fixture.get("/v1/libraries/notes/sync").status == 401)
        #expect(
            try await fixture.get("/v1/libraries/notes/sync", token: "folio_" + String(repeating: "0", count: 64))
                .status == 401)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: other).status == 403)
        // The right token, but not a WebSocket upgrade.
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 426)
    }

    @Test func connectionsPastTheLimitAreRefusedWith503() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--max-connections", "1"])
        let token = try await fixture.token(for: "notes")
        let phone = try fixture.library("Phone")
        let sync = try await phone.startSyncing(with: fixture.server.libraryURL("notes"), token: token)
        try await eventually("the phone to connect") {
            try await fixture.get("/metrics").body.contains("folio_connections_opened_total 1")
        }
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 503)
        let refused = try await RawClient(fixture.server.libraryURL("notes"), token: token).refusedCloseCode()
        #expect(refused == 1013)
        await sync.stop()
        try await eventually("the connection to close") {
            try await fixture.get("/v1/libraries/notes/sync", token: token).status == 426
        }
    }

    @Test func aRevokedTokenIsRefused() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let data = fixture.server.data.path
        let list = try await ToolRun.folio(["serve", "token", "list", "--data", data])
        let id = try #require(list.output.split(separator: "\n").dropFirst().first?.split(separator: "\t").first)
        #expect(!list.output.contains(token), "a token's secret is never listed")
        let revoke = try await ToolRun.folio(["serve", "token", "revoke", String(id), "--data", data])
        #expect(revoke.status == 0)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 401)
        let again = try await ToolRun.folio([
            "serve", "token", "revoke", "tok_000000000000", "--data", fixture.server.data.path,
        ])
        #expect(again.status == 2)
    }

    /// An account database a newer Folio migrated (it may hold revocations or roles this build would ignore) is
    /// refused, not used.
    @Test func anAccountDatabaseOfANewerFolioIsRefused() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("accounts.sqlite")
        _ = try AccountStore(at: url).createToken(library: "notes")
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('accounts-99-later')") }
        try queue.close()
        #expect { try AccountStore(at: url) } throws: { ($0 as? ServerError)?.code == .storage }
    }

    @Test func tokensAreStoredHashed() throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountStore(at: directory.file("accounts.sqlite"))
        let issued = try accounts.createToken(library: "notes")
        let bytes = try Data(contentsOf: directory.file("accounts.sqlite"))
        #expect(bytes.range(of: Data(issued.secret.utf8)) == nil)
        #expect(try accounts.authenticate(issued.secret)?.id == issued.token.id)
        #expect(try accounts.authenticate(issued.secret + "x") == nil)
    }

    @Test func badNamesAndForeignLibrariesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let accounts = try AccountStore(at: directory.file("accounts.sqlite"))
        for name in ["", ".hidden", "a/b", String(repeating: "x", count: 65), "naïve"] {
            #expect(throws: ServerError.self) { try accounts.createToken(library: name) }
        }
        _ = try accounts.createToken(library: "notes", account: "alice")
        let error = try #require(throws: ServerError.self) {
            try accounts.createToken(library: "notes", account: "bob")
        }
        #expect(error.code == .conflict)
    }

    @Test func theServerStopsGracefullyOnSIGTERM() async throws {
        let fixture = try await ServerFixture.start()
        fixture.server.send(SIGTERM)
        let server = fixture.server
        let run = try await offThePool { server.wait() }
        #expect(run.status == 0, "\(run.errors)")
    }
}
