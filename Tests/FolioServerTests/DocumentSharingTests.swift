import Folio
import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Single documents shared through a real `folio serve`: a token that grants documents (a share of each, or an app
/// token's `documents` claim) syncs them alone, each with its role; the library's other documents, their blobs and
/// their presence never reach it, and a change or a request of one of them closes the connection (4406) with
/// nothing stored. A share added or ended while the person's device syncs closes its connection (4409), and the
/// device comes back with what it is granted now and hears which documents it lost.
@Suite struct DocumentSharingTests {
    typealias Backend = AppTokenTests.Backend

    /// A document identity made of one repeated byte.
    static func document(_ byte: UInt8) -> DocumentID {
        DocumentID(UUIDBytes(bytes: Array(repeating: byte, count: 16)))
    }

    /// An app token of `user` that names no library and grants `documents` of `notes`, each with its role.
    static func token(_ backend: Backend, _ user: String, _ documents: [DocumentID: String]) throws -> String {
        var claims = AppTokenTests.claims(user, libraries: [])
        claims["documents"] = [
            "notes": Dictionary(uniqueKeysWithValues: documents.map { ($0.key.description, $0.value) })
        ]
        return try backend.token(claims)
    }

    /// The documents a store syncing with `token` receives from the server, and its vector of each.
    static func received(port: Int, token: String) async throws -> [DocumentID: VersionVector] {
        let endpoint = try ServerEndpoint(url: URL(string: "ws://127.0.0.1:\(port)/v1/libraries/notes")!, token: token)
        let store = try ChangeLogStore(inMemoryNamed: "scope-\(UUID())", key: DeviceKey(), deviceName: "probe")
        _ = try await WebSocketTransport(endpoint: endpoint).sync(store)
        return Dictionary(uniqueKeysWithValues: try store.summaries().map { ($0.document, $0.vector) })
    }

    /// A connection of `token` that reads scopes (and presence), whose device said hello.
    static func scoped(_ fixture: ServerFixture, _ token: String, _ device: HandDevice, presence: Bool = false) throws
        -> RawWebSocket
    {
        let socket = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: token,
            headers: ["\(SyncScope.header): 1"] + (presence ? ["\(SyncFrame.presenceHeader): 1"] : []))
        #expect(socket.upgraded, "\(socket.answer)")
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, device.hello()))
        return socket
    }

    /// The frames `socket` receives within `timeout`, decoded (those that do not decode left out).
    static func frames(of socket: RawWebSocket, within timeout: Duration) -> [SyncFrame] {
        var frames: [SyncFrame] = []
        let deadline = ContinuousClock.now + timeout
        while let frame = socket.nextFrame(within: max(.zero, deadline - ContinuousClock.now)) {
            if frame.opcode == 2, let decoded = try? SyncFrame(decoding: frame.payload) { frames.append(decoded) }
        }
        return frames
    }

    @Test func aTokenOfDocumentsSyncsThemAloneAndIsClosedForAnyOther() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let port = fixture.server.port
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin).secret
        // Three documents another device wrote: bob may write `a`, read `b`, and nothing of `c`.
        let (a, b, c) = (Self.document(0xA1), Self.document(0xB2), Self.document(0xC3))
        let other = HandDevice()
        let seeding = try RawWebSocket(port: port, library: "notes", token: admin)
        _ = seeding.socket.send(RawWebSocket.frame(opcode: 2, other.hello()))
        for document in [a, b, c] {
            _ = seeding.socket.send(
                RawWebSocket.frame(
                    opcode: 2, other.changes([other.change(seq: 1, of: document, lamport: 1)], of: document)))
        }
        try await eventually("the other device's documents") {
            try await Self.received(port: port, token: admin).count == 3
        }
        let bob = try Self.token(backend, "bob", [a: "write", b: "read"])

        // The library's client syncs the two documents, and nothing of the third.
        #expect(try await Self.received(port: port, token: bob).keys.sorted() == [a, b])

        // The scope is the first frame; the server's hello announces the two documents alone.
        let device = HandDevice()
        let reading = try Self.scoped(fixture, bob, device)
        let frames = try await offThePool { Self.frames(of: reading, within: .seconds(2)) }
        #expect(frames.first == .scope(.documents([a: true, b: false])), "\(frames.prefix(2))")
        let hello = frames.lazy.compactMap { frame -> SyncHello? in
            guard case .message(_, let bytes) = frame, case .hello(let hello)? = try? SyncMessage(decoding: bytes)
            else { return nil }
            return hello
        }.first
        #expect(hello?.vectors.keys.sorted() == [a, b], "\(String(describing: hello))")

        // A change of a document outside the scope, or of one it may only read, closes the connection; nothing of
        // it is stored. A change of the document it writes is stored.
        let mine = HandDevice()
        for (document, code) in [(c, UInt16(4406)), (b, 4405)] {
            let socket = try Self.scoped(fixture, bob, mine)
            _ = socket.socket.send(
                RawWebSocket.frame(
                    opcode: 2, mine.changes([mine.change(seq: 1, of: document, lamport: 2)], of: document)))
            #expect(try await offThePool { socket.closeCode(within: .seconds(10)) } == code, "\(document)")
            #expect(try await Self.received(port: port, token: admin)[document]?[mine.key.id] == 0)
        }
        let writing = try Self.scoped(fixture, bob, mine)
        _ = writing.socket.send(
            RawWebSocket.frame(opcode: 2, mine.changes([mine.change(seq: 1, of: a, lamport: 2)], of: a)))
        try await eventually("bob's change of the document he writes") {
            try await Self.received(port: port, token: admin)[a]?[mine.key.id] == 1
        }
        #expect(try await offThePool { writing.closeCode(within: .milliseconds(300)) } == nil)

        // Asking for the changes of a document outside the scope closes the connection too.
        let asking = try Self.scoped(fixture, bob, mine)
        let request = SyncMessage.request(document: c, since: VersionVector())
        _ = asking.socket.send(
            RawWebSocket.frame(
                opcode: 2, SyncFrame.message(channel: mine.channel, bytes: request.encoded()).encoded()))
        #expect(try await offThePool { asking.closeCode(within: .seconds(10)) } == 4406)
        #expect(asking.closeReason.contains("not shared"), "\(asking.closeReason)")

        // A client that does not read scopes would offer the other documents: it is refused.
        let old = try RawWebSocket(port: port, library: "notes", token: bob)
        _ = old.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        #expect(try await offThePool { old.closeCode(within: .seconds(10)) } == 4403)
        #expect(old.closeReason.contains("single documents"), "\(old.closeReason)")

        // A token of documents never administers the library, whatever its roles.
        let owner = try Self.token(backend, "carl", [a: "admin"])
        #expect(try await fixture.get("/v1/libraries/notes/admin", token: owner).status == 403)

        // A claim that names no identity, or too many documents, is no token.
        for claimed in [
            ["notes": ["not-a-document": "write"]],
            [
                "notes": Dictionary(
                    uniqueKeysWithValues: (0..<257).map { (UUIDBytes(high: 1, low: UInt64($0)).description, "read") })
            ],
            ["../etc": [a.description: "read"]],
        ] {
            var claims = AppTokenTests.claims("dora", libraries: [])
            claims["documents"] = claimed
            let refused = try RawWebSocket(
                port: port, library: "notes", token: try backend.token(claims), headers: ["\(SyncScope.header): 1"])
            _ = refused.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
            #expect(try await offThePool { refused.closeCode(within: .seconds(10)) } == 4401, "\(refused.closeReason)")
        }
    }

    /// The messages of `kind` among `frames`, decoded.
    static func messages(in frames: [SyncFrame]) -> [SyncMessage] {
        frames.compactMap { frame in
            guard case .message(_, let bytes) = frame else { return nil }
            return try? SyncMessage(decoding: bytes)
        }
    }

    @Test func blobsAndNamesOfOtherDocumentsAreNeitherAskedForNorTakenNorTold() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let port = fixture.server.port
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin).secret
        // Documents whose changes refer to blobs the server lacks: their device never sends them.
        let (a, c) = (Self.document(0xA1), Self.document(0xC3))
        let (blobA, blobC) = (BlobSyncTests.image(21, count: 2_048), BlobSyncTests.image(22, count: 2_048))
        let other = HandDevice()
        let seeding = try RawWebSocket(port: port, library: "notes", token: admin)
        _ = seeding.socket.send(RawWebSocket.frame(opcode: 2, other.hello()))
        var created: [DocumentID: Change] = [:]
        for (document, blob) in [(a, blobA), (c, blobC)] {
            created[document] = other.change(seq: 1, of: document, lamport: 1, blobs: [BlobReference(to: blob)])
            _ = seeding.socket.send(RawWebSocket.frame(opcode: 2, other.changes([created[document]!], of: document)))
        }
        try await eventually("the other device's documents") {
            try await Self.received(port: port, token: admin).count == 2
        }
        let bob = try Self.token(backend, "bob", [a: "write"])

        // Asked at its hello for the blobs the server lacks, bob's device hears only of the one of its document.
        let mine = HandDevice()
        let writing = try Self.scoped(fixture, bob, mine)
        let asked = try await offThePool { Self.frames(of: writing, within: .seconds(2)) }
        let wanted = Self.messages(in: asked).flatMap { message -> [BlobReference] in
            if case .wantBlobs(let references) = message { references } else { [] }
        }
        #expect(wanted == [BlobReference(to: blobA)])
        // Sent both, the server takes the one of the document it writes.
        let both = SyncMessage.blobs([blobA, blobC], lacking: [])
        _ = writing.socket.send(
            RawWebSocket.frame(opcode: 2, SyncFrame.message(channel: mine.channel, bytes: both.encoded()).encoded()))
        try await eventually("bob's blob stored") { try await fixture.metric("folio_blobs_in_total") == 1 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await fixture.metric("folio_blobs_in_total") == 1, "the other document's blob is not taken")

        // A device named once it writes: a connection of single documents hears of it only when it wrote one of them.
        let watching = try Self.scoped(fixture, bob, HandDevice())
        let everything = try Self.scoped(fixture, admin, HandDevice())
        _ = try await offThePool {
            (Self.frames(of: watching, within: .seconds(1)), Self.frames(of: everything, within: .seconds(1)))
        }
        @Sendable func named(_ frames: [SyncFrame]) -> Set<DeviceID> {
            Set(
                Self.messages(in: frames).flatMap { message -> [DeviceID] in
                    if case .hello(let hello) = message { hello.devices.map(\.id) } else { [] }
                })
        }
        let elsewhere = HandDevice()
        let inScope = HandDevice()
        for (device, document, parent) in [(elsewhere, c, created[c]!), (inScope, a, created[a]!)] {
            let socket = try RawWebSocket(port: port, library: "notes", token: admin)
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, device.hello()))
            let renamed = device.change(
                seq: 1, of: document, parents: [parent], lamport: 2, kind: .lifecycle(.rename(to: "renamed")))
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, device.changes([renamed], of: document)))
            try await eventually("the rename stored") {
                try await Self.received(port: port, token: admin)[document]?[device.key.id] == 1
            }
        }
        let heard = try await offThePool { named(Self.frames(of: watching, within: .seconds(2))) }
        let heardAll = try await offThePool { named(Self.frames(of: everything, within: .seconds(2))) }
        #expect(heardAll.isSuperset(of: [elsewhere.key.id, inScope.key.id]), "\(heardAll)")
        #expect(heard.contains(inScope.key.id) && !heard.contains(elsewhere.key.id), "\(heard)")
    }

    @Test func endingTheLibrarysShareLeavesTheDocumentsShared() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin).secret
        let plan = Self.document(0xA1)
        for request in [
            AdminAPI.ShareRequest(subject: "bob", role: .write),
            AdminAPI.ShareRequest(subject: "bob", role: .read, document: plan.description),
        ] {
            let shared = try await fixture.request(
                "PUT", "/v1/libraries/notes/admin/shares", token: admin, body: try AdminAPITests.json(request))
            #expect(shared.status == 200, "\(shared)")
        }
        let bob = try SharingTests.unnamed(backend, "bob")
        let whole = try Self.scoped(fixture, bob, HandDevice())
        #expect(
            try await offThePool { whole.nextFrame(within: .seconds(5)) }?.payload
                == SyncFrame.scope(.library(writes: true)).encoded())

        // The library's share ends: the connection comes back with the document, it is not refused.
        let ended = try await fixture.request("DELETE", "/v1/libraries/notes/admin/shares/bob", token: admin)
        #expect(ended.status == 204, "\(ended)")
        #expect(try await offThePool { whole.closeCode(within: .seconds(10)) } == 4409, "\(whole.closeReason)")
        let narrowed = try Self.scoped(fixture, bob, HandDevice())
        #expect(
            try await offThePool { narrowed.nextFrame(within: .seconds(5)) }?.payload
                == SyncFrame.scope(.documents([plan: false])).encoded())

        // A document named twice in a token (in capitals and not) is no token.
        var claims = AppTokenTests.claims("dora", libraries: [])
        claims["documents"] = ["notes": [plan.description: "read", plan.description.uppercased(): "admin"]]
        let twice = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: try backend.token(claims),
            headers: ["\(SyncScope.header): 1"])
        _ = twice.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        #expect(try await offThePool { twice.closeCode(within: .seconds(10)) } == 4401, "\(twice.closeReason)")
    }

    @Test func presenceAndBlobsOfOtherDocumentsNeverReachAScopedConnection() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let url = fixture.server.libraryURL("notes")
        let alice = try fixture.library("Alice")
        let aliceSync = try await alice.startSyncing(
            with: url, token: try backend.token(AppTokenTests.claims("alice")))
        let (open, secret) = (BlobSyncTests.image(11, count: 4_096), BlobSyncTests.image(12, count: 4_096))
        let shared = try await alice.create(
            PagesDocument.self, named: "Shared", in: .shared,
            contents: try PagesDocument(text: "", images: ["a.png": open]))
        let hidden = try await alice.create(
            PagesDocument.self, named: "Hidden", in: .shared,
            contents: try PagesDocument(text: "", images: ["b.png": secret]))
        try await eventually("both images on the server") {
            try await fixture.metric("folio_blobs_in_total") == 2
        }
        let bob = try Self.token(backend, "bob", [shared.id: "read"])

        // Asked for both blobs, the server sends the one the shared document refers to and names the other lacking.
        let device = HandDevice()
        let asking = try Self.scoped(fixture, bob, device)
        // In ascending order, as the message's decoder takes them.
        let want = SyncMessage.wantBlobs([BlobReference(to: open), BlobReference(to: secret)].sorted())
        _ = asking.socket.send(
            RawWebSocket.frame(opcode: 2, SyncFrame.message(channel: device.channel, bytes: want.encoded()).encoded()))
        let answers = try await offThePool { Self.frames(of: asking, within: .seconds(3)) }.compactMap {
            frame -> (blobs: [Data], lacking: [BlobReference])? in
            guard case .message(_, let bytes) = frame,
                case .blobs(let blobs, let lacking)? = try? SyncMessage(decoding: bytes)
            else { return nil }
            return (blobs, lacking)
        }
        #expect(answers.flatMap(\.blobs) == [open], "\(answers.map { ($0.blobs.count, $0.lacking) })")
        #expect(answers.flatMap(\.lacking) == [BlobReference(to: secret)])

        // Presence in the hidden document reaches alice's other connections, never bob's.
        let watcher = try Self.scoped(fixture, bob, HandDevice(), presence: true)
        let speaker = HandDevice()
        let admin = try await AdminAPITests.token(fixture, "notes", role: .admin).secret
        let talking = try Self.scoped(fixture, admin, speaker, presence: true)
        try await Task.sleep(for: .milliseconds(500))
        for document in [hidden.id, shared.id] {
            _ = talking.socket.send(
                RawWebSocket.frame(
                    opcode: 2,
                    SyncFrame.presence(document: document, device: speaker.key.id, state: [1, 2, 3]).encoded()))
            // Within the relay's pace.
            try await Task.sleep(for: .milliseconds(300))
        }
        let seen = try await offThePool { Self.frames(of: watcher, within: .seconds(2)) }.compactMap {
            frame -> DocumentID? in
            guard case .presence(let document, let from, _) = frame, from == speaker.key.id else { return nil }
            return document
        }
        #expect(seen == [shared.id], "\(seen)")
        await aliceSync.stop()
    }

    @Test func sharesOfDocumentsFollowTheDeviceWhileItSyncs() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let tokenFile = directory.file("admin.token")
        try Data(try await AdminAPITests.token(fixture, "notes", role: .admin).secret.utf8).write(to: tokenFile)
        let url = fixture.server.libraryURL("notes")
        let alice = try fixture.library("Alice")
        let aliceSync = try await alice.startSyncing(
            with: url, token: try backend.token(AppTokenTests.claims("alice")))
        let plan = try await alice.create(TextDocument.self, named: "Plan", in: .shared)
        try await plan.edit([.append("plan\n")])
        let diary = try await alice.create(TextDocument.self, named: "Diary", in: .shared)
        try await diary.edit([.append("diary\n")])
        try await plan.commit()
        try await diary.commit()

        // Plan is shared with bob, for writing (by `folio serve admin share --document`).
        let shared = try await SharingTests.admin(
            fixture, token: tokenFile, ["share", "bob", "--document", plan.id.description])
        #expect(shared.status == 0, "\(shared.errors)")
        let listed = try await SharingTests.admin(fixture, token: tokenFile, ["shares"])
        #expect(listed.output.contains("bob\t\(plan.id)\twrite"), "\(listed.output)")
        let bob = try fixture.library("Bob")
        let bobSync = try await bob.startSyncing(with: url, token: try SharingTests.unnamed(backend, "bob"))
        let scoped = try await firstEvent(of: bobSync, "bob's scope") { if case .scope = $0 { true } else { false } }
        #expect(scoped.last == .scope(.documents([plan.id: true])), "\(scoped)")
        try await eventually("the plan on bob's device") { try await bob.info(of: plan.id) != nil }
        let bobsPlan = try await bob.open(plan.id, as: TextDocument.self)
        try await eventually("alice's text in bob's plan") { await bobsPlan.model.text == "plan\n" }

        // Bob writes the plan; his own new document, and alice's diary, stay where they are.
        try await bobsPlan.edit([.append("bob\n")])
        try await bobsPlan.commit()
        let mine = try await bob.create(TextDocument.self, named: "Mine", in: .shared)
        try await mine.edit([.append("mine\n")])
        try await mine.commit()
        try await diary.edit([.append("more\n")])
        try await diary.commit()
        try await eventually("bob's line in alice's plan") { await plan.model.text == "plan\nbob\n" }
        try await Task.sleep(for: .seconds(1))
        #expect(try await bob.info(of: diary.id) == nil, "the diary is not shared with bob")
        #expect(try await alice.info(of: mine.id) == nil, "bob's own document is not offered")
        let sessions = try AdminAPITests.decode(
            [AdminAPI.Session].self,
            try await SharingTests.admin(fixture, token: tokenFile, ["sessions", "--json"]).output)
        #expect(sessions.filter { $0.grantee == "user:bob" }.count == 1, "bob's device stays connected: \(sessions)")

        // The diary is shared for reading: bob's device comes back with both, and its edits of the diary stay on it.
        let reading = try await SharingTests.admin(
            fixture, token: tokenFile, ["share", "bob", "--document", diary.id.description, "--role", "read"])
        #expect(reading.status == 0, "\(reading.errors)")
        let widened = try await firstEvent(of: bobSync, "bob's wider scope") {
            $0 == .scope(.documents([plan.id: true, diary.id: false]))
        }
        #expect(!widened.contains { if case .documentsRevoked = $0 { true } else { false } }, "\(widened)")
        try await eventually("the diary on bob's device") { try await bob.info(of: diary.id) != nil }
        let bobsDiary = try await bob.open(diary.id, as: TextDocument.self)
        try await eventually("the diary's text") { await bobsDiary.model.text == "diary\nmore\n" }
        try await bobsDiary.edit([.append("bob was here\n")])
        try await bobsDiary.commit()
        try await Task.sleep(for: .seconds(1))
        #expect(await diary.model.text == "diary\nmore\n", "bob may only read the diary")

        // The plan's share ends while it is open on bob's device: his device hears it, and nothing more crosses.
        let ended = try await SharingTests.admin(
            fixture, token: tokenFile, ["unshare", "bob", "--document", plan.id.description])
        #expect(ended.status == 0, "\(ended.errors)")
        let narrowed = try await firstEvent(of: bobSync, "the plan's revocation on bob's device") {
            if case .documentsRevoked = $0 { true } else { false }
        }
        #expect(narrowed.last == .documentsRevoked([plan.id]), "\(narrowed)")
        try await plan.edit([.append("alice after\n")])
        try await plan.commit()
        try await bobsPlan.edit([.append("bob after\n")])
        try await bobsPlan.commit()
        try await diary.edit([.append("still read\n")])
        try await diary.commit()
        // Bob's own line and alice's are concurrent: either may come first.
        try await eventually("the diary still reaches bob") { await bobsDiary.model.text.contains("still read\n") }
        #expect(await plan.model.text == "plan\nbob\nalice after\n")
        #expect(await bobsPlan.model.text == "plan\nbob\nbob after\n")

        // Bob's app lets the plan go: it leaves his device, while the diary goes on syncing.
        try await bobsPlan.close()
        let removal = try await bob.removeLocalCopy(of: plan.id)
        #expect(removal.changes > 0)
        #expect(try await bob.info(of: plan.id) == nil)
        #expect(try bob.store.changes(of: plan.id).isEmpty)
        try await diary.edit([.append("after the plan left\n")])
        try await diary.commit()
        try await eventually("the diary after the plan left bob") {
            await bobsDiary.model.text.contains("after the plan left\n")
        }
        #expect(try await bob.info(of: plan.id) == nil, "the plan does not come back while it is not shared")
        let refusedEdit = #expect(throws: StoreError.self) {
            try bob.store.append(.edit(Edit(operations: Data("x".utf8))), to: plan.id)
        }
        #expect(refusedEdit?.code == .invalidChange, "bob's device makes no change in the plan before it is back")

        // Shared again, the plan comes back with bob's own line (his line written after the share ended never
        // left his device), and bob writes in it again.
        let again = try await SharingTests.admin(
            fixture, token: tokenFile, ["share", "bob", "--document", plan.id.description])
        #expect(again.status == 0, "\(again.errors)")
        _ = try await firstEvent(of: bobSync, "the plan shared again") {
            $0 == .scope(.documents([plan.id: true, diary.id: false]))
        }
        try await eventually("the plan back on bob's device") { try await bob.info(of: plan.id) != nil }
        let planAgain = try await bob.open(plan.id, as: TextDocument.self)
        try await eventually("the plan's text on bob's device") {
            await planAgain.model.text == "plan\nbob\nalice after\n"
        }
        try await eventually("bob's device goes on after its own changes") {
            try bob.store.documentsAwaitingOwnChanges().isEmpty
        }
        try await planAgain.edit([.append("bob again\n")])
        try await planAgain.commit()
        try await eventually("bob's new line reaches alice") { await plan.model.text.contains("bob again\n") }
        try await planAgain.close()
        _ = try await SharingTests.admin(
            fixture, token: tokenFile, ["unshare", "bob", "--document", plan.id.description])

        // Nothing is shared with bob any more: his device is refused and hears that its access ended.
        let last = try await SharingTests.admin(
            fixture, token: tokenFile, ["unshare", "bob", "--document", diary.id.description])
        #expect(last.status == 0, "\(last.errors)")
        let refused = try await firstEvent(of: bobSync, "bob's access to end") {
            if case .accessRevoked = $0 { true } else { false }
        }
        // Refused at once (4401), or at the connection that follows the close (4403).
        #expect(
            refused.contains { if case .connection(.refused(4401, _)) = $0 { true } else { false } }
                || refused.contains { if case .connection(.refused(4403, _)) = $0 { true } else { false } },
            "\(refused)")
        try await bobsDiary.close()
        await bobSync.stop()
        await aliceSync.stop()
    }
}
