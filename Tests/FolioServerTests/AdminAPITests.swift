import Folio
import FolioCore
import FolioServer
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// The admin API of a real `folio serve` (`/v1/libraries/NAME/admin/…`) and `folio serve admin`: only an admin token
/// of the library may use it; sessions listed and closed, tokens issued and revoked, a library taken offline and
/// back, shares given, changed and ended, each taking effect on live connections.
@Suite struct AdminAPITests {
    /// A server token of `library` with `role`, issued by `folio serve token create`: its secret and id.
    static func token(
        _ fixture: ServerFixture, _ library: String, role: LibraryRole
    ) async throws -> (secret: String, id: String) {
        let run = try await ToolRun.folio([
            "serve", "token", "create", "--library", library, "--role", role.rawValue, "--data",
            fixture.server.data.path,
        ])
        #expect(run.status == 0, "\(run.errors)")
        let id = run.errors.split(separator: " ").first { $0.hasPrefix("tok_") }.map(String.init) ?? ""
        return (run.output.trimmingCharacters(in: .whitespacesAndNewlines), id)
    }

    static func json(_ value: some Encodable) throws -> Data { try AdminAPI.encoder.encode(value) }

    static func decode<T: Decodable>(_ type: T.Type, _ body: String) throws -> T {
        try AdminAPI.decoder.decode(T.self, from: Data(body.utf8))
    }

    /// A WebSocket of `token` to `library` that said hello.
    static func connect(_ fixture: ServerFixture, _ library: String, _ token: String) throws -> RawWebSocket {
        let socket = try RawWebSocket(port: fixture.server.port, library: library, token: token)
        #expect(socket.upgraded)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        return socket
    }

    @Test func onlyAnAdminTokenOfTheLibraryUsesTheAdminAPI() async throws {
        let fixture = try await ServerFixture.start()
        let admin = try await Self.token(fixture, "notes", role: .admin)
        let otherAdmin = try await Self.token(fixture, "photos", role: .admin)
        #expect(try await fixture.get("/v1/libraries/notes/admin").status == 401)
        #expect(try await fixture.get("/v1/libraries/notes/admin", token: "folio_nope").status == 401)
        for role in [LibraryRole.read, .write, .resolve] {
            let token = try await Self.token(fixture, "notes", role: role)
            let answer = try await fixture.get("/v1/libraries/notes/admin", token: token.secret)
            #expect(answer.status == 403, "\(role): \(answer)")
            #expect(try Self.decode(AdminAPI.Failure.self, answer.body).error.contains("administer"))
            // Nor may it change anything.
            let offline = try await fixture.request("POST", "/v1/libraries/notes/admin/offline", token: token.secret)
            #expect(offline.status == 403, "\(role)")
        }
        #expect(try await fixture.get("/v1/libraries/notes/admin", token: otherAdmin.secret).status == 403)
        let status = try await fixture.get("/v1/libraries/notes/admin", token: admin.secret)
        #expect(status.status == 200, "\(status)")
        #expect(
            try Self.decode(AdminAPI.Status.self, status.body)
                == AdminAPI.Status(library: "notes", online: true, offlineSince: nil, sessions: 0, shares: 0))
        // Nothing of the refused requests happened.
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: admin.secret).status == 426)
    }

    @Test func sessionsAreListedAndClosed() async throws {
        let fixture = try await ServerFixture.start()
        let admin = try await Self.token(fixture, "notes", role: .admin)
        let writer = try await Self.token(fixture, "notes", role: .write)
        let elsewhere = try await Self.token(fixture, "photos", role: .write)
        let first = try Self.connect(fixture, "notes", writer.secret)
        let second = try Self.connect(fixture, "notes", writer.secret)
        let other = try Self.connect(fixture, "photos", elsewhere.secret)
        let listed = try await fixture.get("/v1/libraries/notes/admin/sessions", token: admin.secret)
        let sessions = try Self.decode([AdminAPI.Session].self, listed.body)
        #expect(sessions.map(\.grantee) == [writer.id, writer.id], "\(listed)")
        #expect(sessions.allSatisfy { $0.role == .write && !$0.shared && $0.address.contains("127.0.0.1") })
        // The photos session is not this library's to see or close.
        let photos = try await fixture.get("/v1/libraries/photos/admin/sessions", token: admin.secret)
        #expect(photos.status == 403)
        let kicked = try await fixture.request(
            "DELETE", "/v1/libraries/notes/admin/sessions/\(sessions[0].id)", token: admin.secret)
        #expect(kicked.status == 204, "\(kicked)")
        #expect(try await offThePool { first.closeCode(within: .seconds(10)) } == Self.kicked)
        #expect(try await offThePool { second.closeCode(within: .seconds(1)) } == nil, "the other session goes on")
        for id in ["\(sessions[0].id)", "999999", "x", "-1"] {
            let again = try await fixture.request(
                "DELETE", "/v1/libraries/notes/admin/sessions/\(id)", token: admin.secret)
            #expect(again.status == 404, "\(id): \(again)")
        }
        #expect(try await offThePool { other.closeCode(within: .seconds(1)) } == nil)
        try await eventually("the closed session to leave the list") {
            let now = try await fixture.get("/v1/libraries/notes/admin/sessions", token: admin.secret)
            return try Self.decode([AdminAPI.Session].self, now.body).map(\.id) == [sessions[1].id]
        }
    }

    static let kicked: UInt16 = 4410

    @Test func tokensAreIssuedListedAndRevokedWithTheirConnections() async throws {
        let fixture = try await ServerFixture.start()
        let admin = try await Self.token(fixture, "notes", role: .admin)
        let photos = try await Self.token(fixture, "photos", role: .write)
        let issued = try await fixture.request(
            "POST", "/v1/libraries/notes/admin/tokens", token: admin.secret,
            body: try Self.json(AdminAPI.TokenRequest(role: .read)))
        #expect(issued.status == 201, "\(issued)")
        let token = try Self.decode(AdminAPI.IssuedToken.self, issued.body)
        #expect(token.token.role == .read && token.token.revoked == nil)
        let reader = try Self.connect(fixture, "notes", token.secret)
        let notice = try await offThePool { reader.nextFrame(within: .seconds(10)) }
        #expect(notice?.payload == SyncFrame.readOnlyNotice.encoded(), "a read token's connection")
        let listed = try Self.decode(
            [AdminAPI.Token].self, try await fixture.get("/v1/libraries/notes/admin/tokens", token: admin.secret).body)
        #expect(listed.map(\.id) == [admin.id, token.token.id], "never another library's")
        #expect(!listed.contains { $0.id == photos.id })
        // Another library's token is not found, and stays valid.
        let foreign = try await fixture.request(
            "DELETE", "/v1/libraries/notes/admin/tokens/\(photos.id)", token: admin.secret)
        #expect(foreign.status == 404, "\(foreign)")
        #expect(try await fixture.get("/v1/libraries/photos/sync", token: photos.secret).status == 426)
        let revoked = try await fixture.request(
            "DELETE", "/v1/libraries/notes/admin/tokens/\(token.token.id)", token: admin.secret)
        #expect(revoked.status == 204, "\(revoked)")
        #expect(try await offThePool { reader.closeCode(within: .seconds(10)) } == 4401)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: token.secret).status == 401)
        // Bodies that are not a request: refused, nothing issued.
        let bad: [(Data, Int)] = [
            (Data(#"{"role":"owner"}"#.utf8), 400), (Data("nope".utf8), 400),
            (Data(repeating: 0x20, count: AdminAPI.maximumBodyBytes + 1), 413),
        ]
        for (body, status) in bad {
            let answer = try await fixture.request(
                "POST", "/v1/libraries/notes/admin/tokens", token: admin.secret, body: body)
            #expect(answer.status == status, "\(answer)")
        }
        let after = try Self.decode(
            [AdminAPI.Token].self, try await fixture.get("/v1/libraries/notes/admin/tokens", token: admin.secret).body)
        #expect(after.count == 2)
    }

    @Test func aLibraryTakenOfflineClosesAndRefusesItsConnectionsUntilItIsBack() async throws {
        let fixture = try await ServerFixture.start()
        let admin = try await Self.token(fixture, "notes", role: .admin)
        let writer = try await Self.token(fixture, "notes", role: .write)
        let photos = try await Self.token(fixture, "photos", role: .write)
        let open = try Self.connect(fixture, "notes", writer.secret)
        let other = try Self.connect(fixture, "photos", photos.secret)
        let offline = try await fixture.request("POST", "/v1/libraries/notes/admin/offline", token: admin.secret)
        #expect(offline.status == 200, "\(offline)")
        let status = try Self.decode(AdminAPI.Status.self, offline.body)
        #expect(!status.online && status.offlineSince != nil)
        #expect(try await offThePool { open.closeCode(within: .seconds(10)) } == 4503)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: writer.secret).status == 503)
        let refused = try RawWebSocket(port: fixture.server.port, library: "notes", token: writer.secret)
        #expect(try await offThePool { refused.closeCode(within: .seconds(10)) } == 4503)
        #expect(try await offThePool { other.closeCode(within: .seconds(1)) } == nil, "other libraries go on")
        // The admin API still answers; the library comes back.
        let online = try await fixture.request("POST", "/v1/libraries/notes/admin/online", token: admin.secret)
        #expect(try Self.decode(AdminAPI.Status.self, online.body).online)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: writer.secret).status == 426)
        // Taken offline by another process (the account database): the running server closes within seconds.
        let back = try Self.connect(fixture, "notes", writer.secret)
        let accounts = try AccountStore(at: fixture.server.data.appendingPathComponent("accounts.sqlite"))
        try accounts.takeOffline("notes", now: Date())
        #expect(try await offThePool { back.closeCode(within: .seconds(15)) } == 4503)
    }

    /// An admin by a share, or by an app token, manages the library's sessions and shares, and lists and revokes its
    /// tokens, but issues none: a token outlasts a share or an app token. `folio serve admin revoke` revokes one.
    @Test func anAdminByAShareManagesTheLibraryButIssuesNoToken() async throws {
        let backend = AppTokenTests.Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let owner = try await Self.token(fixture, "notes", role: .admin)
        let writer = try await Self.token(fixture, "notes", role: .write)
        let share = try await fixture.request(
            "PUT", "/v1/libraries/notes/admin/shares", token: owner.secret,
            body: try Self.json(AdminAPI.ShareRequest(subject: "dana", role: .admin)))
        #expect(share.status == 200, "\(share)")
        let dana = try backend.token(AppTokenTests.claims("dana", libraries: []))
        let byToken = try backend.token(AppTokenTests.claims("erin", libraries: ["notes"], role: "admin"))
        for admin in [dana, byToken] {
            #expect(try await fixture.get("/v1/libraries/notes/admin/sessions", token: admin).status == 200)
            #expect(try await fixture.get("/v1/libraries/notes/admin/tokens", token: admin).status == 200)
            let issued = try await fixture.request(
                "POST", "/v1/libraries/notes/admin/tokens", token: admin,
                body: try Self.json(AdminAPI.TokenRequest(role: .admin)))
            #expect(issued.status == 403, "\(issued)")
        }
        // Dana's share gives her nothing in another library.
        #expect(try await fixture.get("/v1/libraries/photos/admin", token: dana).status == 403)
        let open = try Self.connect(fixture, "notes", writer.secret)
        let tokenFile = directory.file("dana.token")
        try Data(dana.utf8).write(to: tokenFile)
        let revoked = try await ToolRun.folio([
            "serve", "admin", "revoke", writer.id, "--server", fixture.server.base, "--library", "notes",
            "--token-file", tokenFile.path,
        ])
        #expect(revoked.status == 0, "\(revoked.errors)")
        #expect(try await offThePool { open.closeCode(within: .seconds(10)) } == 4401)
        let tokens = try await ToolRun.folio([
            "serve", "admin", "tokens", "--server", fixture.server.base, "--library", "notes",
            "--token-file", tokenFile.path,
        ])
        #expect(tokens.output.split(separator: "\n").contains { $0.hasPrefix(writer.id) && $0.contains("revoked") })
        let unknown = try await ToolRun.folio([
            "serve", "admin", "revoke", "tok_000000000000", "--server", fixture.server.base, "--library", "notes",
            "--token-file", tokenFile.path,
        ])
        #expect(unknown.status == 1 && unknown.errors.contains("404"), "\(unknown.errors)")
    }

    /// A library's tokens and shares are bounded (`--tokens-per-library`, `--shares-per-library`): past either the
    /// admin API answers 409 and keeps nothing; an ended share makes room again, a revoked token does not.
    @Test func aLibrarysTokensAndSharesAreBounded() async throws {
        let fixture = try await ServerFixture.start(arguments: [
            "--tokens-per-library", "2", "--shares-per-library", "2",
        ])
        let admin = try await Self.token(fixture, "notes", role: .admin)
        func issue() async throws -> (status: Int, body: String) {
            try await fixture.request(
                "POST", "/v1/libraries/notes/admin/tokens", token: admin.secret,
                body: try Self.json(AdminAPI.TokenRequest(role: .read)))
        }
        func share(_ subject: String) async throws -> Int {
            try await fixture.request(
                "PUT", "/v1/libraries/notes/admin/shares", token: admin.secret,
                body: try Self.json(AdminAPI.ShareRequest(subject: subject, role: .read))
            ).status
        }
        // The admin's own token is one of the two.
        let second = try await issue()
        #expect(second.status == 201, "\(second)")
        let refused = try await issue()
        #expect(refused.status == 409, "\(refused)")
        func tokenCount() async throws -> Int {
            try Self.decode(
                [AdminAPI.Token].self,
                try await fixture.get("/v1/libraries/notes/admin/tokens", token: admin.secret).body
            ).count
        }
        #expect(try await tokenCount() == 2, "nothing kept of the refused one")
        let id = try Self.decode(AdminAPI.IssuedToken.self, second.body).token.id
        #expect(
            try await fixture.request("DELETE", "/v1/libraries/notes/admin/tokens/\(id)", token: admin.secret).status
                == 204)
        // A revoked token stays listed, and counts: issuing and revoking in turn would grow the list.
        #expect(try await issue().status == 409)

        #expect(try await share("ada") == 200)
        #expect(try await share("bob") == 200)
        #expect(try await share("carl") == 409)
        #expect(try await share("bob") == 200, "a user it is shared with already may get another role")
        #expect(
            try await fixture.request("DELETE", "/v1/libraries/notes/admin/shares/ada", token: admin.secret).status
                == 204)
        #expect(try await share("carl") == 200, "an ended share makes room")
        let shares = try Self.decode(
            [AdminAPI.Share].self, try await fixture.get("/v1/libraries/notes/admin/shares", token: admin.secret).body)
        #expect(shares.map(\.subject) == ["bob", "carl"])
    }
}
