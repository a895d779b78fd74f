import Folio
import FolioCore
import FolioServer
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Libraries shared with an app's users through a real `folio serve`: a share opens the library to a user whose
/// token does not name it, with the share's role; changing or ending it closes the connections it opened, whether
/// the admin API of this server or another process changed it; the user's device hears that its access ended, and
/// may remove its copies.
@Suite struct SharingTests {
    typealias Backend = AppTokenTests.Backend

    /// A token of `user` that names no library: it opens only what is shared with them.
    static func unnamed(_ backend: Backend, _ user: String) throws -> String {
        try backend.token(AppTokenTests.claims(user, libraries: []))
    }

    /// Runs `folio serve admin ARGUMENTS` for `notes` against the fixture's server with the admin token.
    static func admin(_ fixture: ServerFixture, token: URL, _ arguments: [String]) async throws -> ToolRun {
        try await ToolRun.folio(
            ["serve", "admin"] + arguments + [
                "--server", fixture.server.base, "--library", "notes", "--token-file", token.path,
            ])
    }

    @Test func aShareOpensTheLibraryWithItsRoleAndEndingItClosesTheConnections() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let tokenFile = directory.file("admin.token")
        try Data(try await AdminAPITests.token(fixture, "notes", role: .admin).secret.utf8).write(to: tokenFile)
        let bob = try Self.unnamed(backend, "bob")
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: bob).status == 403)

        let shared = try await Self.admin(fixture, token: tokenFile, ["share", "bob", "--role", "write"])
        #expect(shared.status == 0, "\(shared.errors)")
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: bob).status == 426)
        #expect(try await fixture.get("/v1/libraries/photos/sync", token: bob).status == 403, "only that library")
        let writing = try AdminAPITests.connect(fixture, "notes", bob)
        let users = try await Self.admin(fixture, token: tokenFile, ["users"])
        #expect(users.output.split(separator: "\n").dropFirst() == ["bob\twrite\t0\t1\tfalse"], "\(users.output)")
        let sessions = try await Self.admin(fixture, token: tokenFile, ["sessions", "--json"])
        let listed = try AdminAPITests.decode([AdminAPI.Session].self, sessions.output)
        #expect(listed.map { "\($0.grantee) \($0.role) \($0.shared)" } == ["user:bob write true"])

        // A new role closes the connections of the old one; the next connection has the new one.
        let reader = try await Self.admin(fixture, token: tokenFile, ["share", "bob", "--role", "read"])
        #expect(reader.status == 0, "\(reader.errors)")
        #expect(try await offThePool { writing.closeCode(within: .seconds(10)) } == 4409)
        #expect(writing.closeReason.contains("role"), "\(writing.closeReason)")
        let reading = try AdminAPITests.connect(fixture, "notes", bob)
        let notice = try await offThePool { reading.nextFrame(within: .seconds(10)) }
        #expect(notice?.payload == SyncFrame.readOnlyNotice.encoded())

        // A token that names the library keeps the role it carries, and a share's end does not touch it.
        _ = try await Self.admin(fixture, token: tokenFile, ["share", "ada", "--role", "read"])
        let ada = try AdminAPITests.connect(fixture, "notes", try backend.token(AppTokenTests.claims("ada")))
        let adaFirst = try await offThePool { ada.nextFrame(within: .seconds(5)) }
        #expect(adaFirst?.payload != SyncFrame.readOnlyNotice.encoded(), "ada's token writes")
        let unshared = try await Self.admin(fixture, token: tokenFile, ["unshare", "ada"])
        #expect(unshared.status == 0, "\(unshared.errors)")
        #expect(try await offThePool { ada.closeCode(within: .seconds(2)) } == nil)

        // The end of bob's share closes his connection and refuses the next.
        let ended = try await Self.admin(fixture, token: tokenFile, ["unshare", "bob"])
        #expect(ended.status == 0, "\(ended.errors)")
        #expect(try await offThePool { reading.closeCode(within: .seconds(10)) } == 4401)
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: bob).status == 403)
        let again = try await Self.admin(fixture, token: tokenFile, ["unshare", "bob"])
        #expect(again.status != 0 && again.errors.contains("404"), "\(again.errors)")

        // Ended by another process (the account database): the running server closes it within seconds.
        _ = try await Self.admin(fixture, token: tokenFile, ["share", "bob"])
        let back = try AdminAPITests.connect(fixture, "notes", bob)
        let accounts = try AccountStore(at: fixture.server.data.appendingPathComponent("accounts.sqlite"))
        try accounts.unshare("notes", from: "bob")
        #expect(try await offThePool { back.closeCode(within: .seconds(15)) } == 4401)
        let shares = try await Self.admin(fixture, token: tokenFile, ["shares"])
        #expect(shares.output.split(separator: "\n").count == 1, "only the header: \(shares.output)")
    }

    @Test func aDeviceWhoseShareEndsHearsItAndMayRemoveItsCopies() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin)
        let share = try await fixture.request(
            "PUT", "/v1/libraries/notes/admin/shares", token: admin.secret,
            body: try AdminAPITests.json(AdminAPI.ShareRequest(subject: "bob", role: .write)))
        #expect(share.status == 200, "\(share)")
        let alice = try fixture.library("Alice")
        var bob: DocumentLibrary? = try fixture.library("Bob")
        let bobRoot = bob!.root
        let aliceSync = try await alice.startSyncing(
            with: fixture.server.libraryURL("notes"), token: try backend.token(AppTokenTests.claims("alice")))
        let bobSync = try await bob!.startSyncing(
            with: fixture.server.libraryURL("notes"), token: try Self.unnamed(backend, "bob"))
        let note = try await alice.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("shared line\n")])
        try await eventually("the note on bob's device") { [bob] in
            try await bob!.info(of: note.id) != nil
        }

        // A new role: bob's device connects again by itself, and reads only.
        let reading = try await fixture.request(
            "PUT", "/v1/libraries/notes/admin/shares", token: admin.secret,
            body: try AdminAPITests.json(AdminAPI.ShareRequest(subject: "bob", role: .read)))
        #expect(reading.status == 200, "\(reading)")
        let reconnected = try await firstEvent(of: bobSync, "bob's device to come back as a reader") {
            $0 == .connection(.readOnly)
        }
        #expect(!reconnected.contains { if case .accessRevoked = $0 { true } else { false } }, "\(reconnected)")
        #expect(bob!.syncsLive)
        // The same role again closes nothing.
        _ = try await fixture.request(
            "PUT", "/v1/libraries/notes/admin/shares", token: admin.secret,
            body: try AdminAPITests.json(AdminAPI.ShareRequest(subject: "bob", role: .read)))
        let sessions = try AdminAPITests.decode(
            [AdminAPI.Session].self,
            try await fixture.get("/v1/libraries/notes/admin/sessions", token: admin.secret).body)
        // Longer than the server's watch takes to look at the shares again.
        try await Task.sleep(for: .milliseconds(1_500))
        let after = try AdminAPITests.decode(
            [AdminAPI.Session].self,
            try await fixture.get("/v1/libraries/notes/admin/sessions", token: admin.secret).body)
        #expect(sessions.map(\.id) == after.map(\.id), "no session closed for a role that did not change")

        // The share ends while the note is open on bob's device.
        do {
            let bobsCopy = try await bob!.open(note.id, as: TextDocument.self)
            try await eventually("the line in bob's open note") { await bobsCopy.model.text == "shared line\n" }
            let ended = try await fixture.request(
                "DELETE", "/v1/libraries/notes/admin/shares/bob", token: admin.secret)
            #expect(ended.status == 204, "\(ended)")
            let events = try await firstEvent(of: bobSync, "bob's device to hear its access ended") { event in
                if case .accessRevoked = event { true } else { false }
            }
            #expect(
                events.contains { if case .connection(.refused(4401, _)) = $0 { true } else { false } }, "\(events)")
            // Nothing crosses any more: bob's edit does not reach alice, alice's does not reach bob.
            try await bobsCopy.edit([.append("bob after the end\n")])
            try await bobsCopy.save()
            try await note.edit([.append("alice after the end\n")])
            try await Task.sleep(for: .seconds(1))
            #expect(await note.model.text == "shared line\nalice after the end\n")
            #expect(await bobsCopy.model.text == "shared line\nbob after the end\n")
            #expect(!bob!.syncsLive)
            try await bobsCopy.close()
        }

        // The app chooses to remove bob's copies.
        await bobSync.stop()
        bob = nil
        try DocumentLibrary.removeLocalCopies(at: bobRoot)
        #expect(!FileManager.default.fileExists(atPath: bobRoot.path))
        // Removing what is gone already is done.
        try DocumentLibrary.removeLocalCopies(at: bobRoot)
        await aliceSync.stop()
    }
}
