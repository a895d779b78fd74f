import Folio
import FolioCore
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Devices name the people they act for, through a real `folio serve`: the server records the user of a device's app
/// token (its `name` claim, else its subject) whatever the device says, passes on what a device of a server token
/// says itself, and tells devices that read message format 4; versions, the loss ledger and `folio inspect` name
/// people. A client of format 3 still syncs, without persons.
@Suite struct PeopleTests {
    typealias Backend = AppTokenTests.Backend

    /// One sync of `library` through the fixture's server with `token`, in the formats the client offers.
    static func sync(
        _ library: DocumentLibrary, _ fixture: ServerFixture, _ token: String,
        formats: SyncDriver.Formats = .runsWhenOffered
    ) async throws {
        let transport = WebSocketTransport(
            endpoint: try ServerEndpoint(url: fixture.server.libraryURL("notes"), token: token), formats: formats)
        let report = try await library.sync(through: transport)
        #expect(report.isComplete, "\(report)")
    }

    @Test func devicesAreNamedByTheirTokensUsersAndReportsNamePeople() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        var annaClaims = AppTokenTests.claims("user-7")
        annaClaims["name"] = "Anna"
        let anna = try backend.token(annaClaims)
        let ben = try backend.token(AppTokenTests.claims("ben"))
        let server = try await fixture.token(for: "notes")
        // Anna's app says someone else: her token's user is recorded. Ben's says nothing: his subject is.
        let iPad = try DocumentLibrary(at: directory.subdirectory("iPad"), deviceName: "iPad", person: "Mallory")
        let mac = try DocumentLibrary(at: directory.subdirectory("Mac"), deviceName: "Mac")
        // A device of a server token says whom it acts for itself; one of format 3 cannot.
        let phone = try DocumentLibrary(at: directory.subdirectory("Phone"), deviceName: "Phone", person: "Cy")
        let old = try DocumentLibrary(at: directory.subdirectory("Old"), deviceName: "Old", person: "Dan")

        let note = try await iPad.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.replace("the plan\n")])
        try await Self.sync(iPad, fixture, anna)
        try await Self.sync(mac, fixture, ben)
        let onMac = try await mac.open(note.id, as: TextDocument.self)
        #expect(await onMac.model.text == "the plan\n")
        // One line rewritten two ways: a conflict for a person.
        try await note.edit([.replace("the plan, by Anna\n")])
        try await onMac.edit([.replace("the plan, by Ben\n")])
        try await Self.sync(iPad, fixture, anna)
        try await Self.sync(mac, fixture, ben)
        try await onMac.refresh()
        let versions = try await onMac.versions()
        #expect(versions.count == 2)
        let annas = try #require(versions.first { $0.contents.text.contains("Anna") })
        #expect(annas.savingDevice.person == "Anna", "the server's word, not the device's")
        #expect(annas.savingDevice.name == "iPad")
        let bens = try #require(versions.first { $0.contents.text.contains("Ben") })
        #expect(bens.savingDevice.person == "", "the Mac's app names no person")
        try await onMac.replace(with: bens)
        try await Self.sync(mac, fixture, ben)

        // The phone writes too (a device is named once it proved its key), and learns the people.
        let onPhone = try await {
            try await Self.sync(phone, fixture, server)
            return try await phone.open(note.id, as: TextDocument.self)
        }()
        try await onPhone.edit([.append("seen\n")])
        try await Self.sync(phone, fixture, server)
        try await Self.sync(old, fixture, server, formats: .runs)
        let onOld = try await old.open(note.id, as: TextDocument.self)
        try await onOld.edit([.append("old\n")])
        try await Self.sync(old, fixture, server, formats: .runs)
        try await Self.sync(phone, fixture, server)
        try await Self.sync(iPad, fixture, anna)

        func persons(_ library: DocumentLibrary) throws -> [String: String] {
            Dictionary(
                uniqueKeysWithValues: try library.store.devices.all().filter { !$0.name.isEmpty }.map {
                    ($0.name, $0.person)
                })
        }
        // An app token's user, a server token's device's own word, and nothing in format 3; the server's own
        // identity acts for nobody.
        let onPhoneDevices = try persons(phone)
        #expect(
            onPhoneDevices == ["iPad": "Anna", "Mac": "ben", "Phone": "Cy", "Old": "", "server": ""],
            "\(onPhoneDevices)")
        let onIPad = try persons(iPad)
        #expect(
            onIPad == ["iPad": "Mallory", "Mac": "ben", "Phone": "Cy", "Old": "", "server": ""],
            "itself unchanged: \(onIPad)")
        let onOldDevices = try persons(old)
        #expect(
            onOldDevices == ["iPad": "", "Mac": "", "Phone": "", "Old": "Dan", "server": ""],
            "format 3 carries no person: \(onOldDevices)")

        // The loss ledger names the person who chose and the person whose version went.
        try await onPhone.refresh()
        let record = try #require(try await onPhone.lossLedger().last)
        #expect(record.resolvedBy.label == "ben on Mac")
        #expect(record.discarded.map(\.device.label) == ["Anna on iPad"])

        // So does the conflict-inspection report of the phone's library.
        let inspect = try await ToolRun.folio(["inspect", phone.root.path, "--report", "json"])
        #expect(inspect.status == 0, "\(inspect.errors)")
        for line in [#""name" : "Anna on iPad""#, #""person" : "Anna""#, #""name" : "ben on Mac""#] {
            #expect(inspect.output.contains(line), "\(line) in \(inspect.output.prefix(4_000))")
        }
        let markdown = try await ToolRun.folio(["inspect", phone.root.path, "--report", "md"])
        #expect(markdown.output.contains("ben on Mac"), "\(markdown.output.prefix(4_000))")
    }

    /// A token's `name` claim never refuses a token (identity providers put OpenID Connect's `name` in theirs): one
    /// that is empty, too long, holds a control or format character or is not text leaves the subject as the person.
    @Test func anUnusableNameClaimLeavesTheSubject() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        let names: [Any] = ["", "Anna\u{7}", "Anna\u{202E}", String(repeating: "n", count: 257), 42, ["Anna"]]
        for (index, name) in names.enumerated() {
            var claims = AppTokenTests.claims("user-\(index)")
            claims["name"] = name
            let token = try backend.token(claims)
            #expect(try await fixture.get("/v1/libraries/notes/sync", token: token).status == 426, "\(name)")
            let device = try DocumentLibrary(
                at: directory.subdirectory("device-\(index)"), deviceName: "device \(index)", person: "someone")
            let note = try await device.create(TextDocument.self, named: "Note \(index)", in: .shared)
            try await note.edit([.append("x")])
            try await Self.sync(device, fixture, token)
        }
        let watcher = try DocumentLibrary(at: directory.subdirectory("watcher"), deviceName: "watcher")
        try await Self.sync(watcher, fixture, try await fixture.token(for: "notes"))
        let persons = Dictionary(
            uniqueKeysWithValues: try watcher.store.devices.all().filter { $0.name.hasPrefix("device ") }.map {
                ($0.name, $0.person)
            })
        #expect(persons == Dictionary(uniqueKeysWithValues: names.indices.map { ("device \($0)", "user-\($0)") }))
    }

    /// A user who holds another device's changes (from a shared folder, say) and brings them to the server under
    /// that device's identity proves nothing of its key: the device's person stays what its own key said. A proof
    /// signed with another key, or for another person, closes the connection (1008) and records nothing.
    @Test func relayedChangesAndForgedProofsRecordNoPerson() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        var annaClaims = AppTokenTests.claims("anna")
        annaClaims["name"] = "Anna"
        let anna = try backend.token(annaClaims)
        let bob = try backend.token(AppTokenTests.claims("bob"))
        let iPad = try DocumentLibrary(at: directory.subdirectory("iPad"), deviceName: "iPad")
        let note = try await iPad.create(TextDocument.self, named: "Plan", in: .shared)
        try await note.edit([.append("first\n")])
        try await Self.sync(iPad, fixture, anna)
        try await note.edit([.append("not on the server yet\n")])
        let changes = try iPad.store.changes(of: note.id)
        let heads = try iPad.store.signedHeads(of: note.id)
        let device = iPad.store.localDevice

        // Bob brings the iPad's new change as the iPad, in a hello of format 4 without a proof: it is stored, and the
        // iPad keeps Anna.
        let relay = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: bob, headers: ["Folio-Message-Formats: 2, 3, 4"])
        #expect(relay.upgraded)
        let claimed = Device(id: device.id, name: "Bob's iPad", person: "Bob")
        let hello = SyncMessage.hello(SyncHello(device: claimed, session: 77, vectors: [:]))
        _ = relay.socket.send(
            RawWebSocket.frame(
                opcode: 2,
                SyncFrame.message(channel: 77, bytes: hello.encoded(format: SyncMessage.peopleFormatVersion)).encoded())
        )
        let upload = SyncMessage.changes(document: note.id, changes: changes.map(EncodedChange.init), heads: heads)
        _ = relay.socket.send(
            RawWebSocket.frame(opcode: 2, SyncFrame.message(channel: 77, bytes: upload.encoded()).encoded()))
        let watcher = try DocumentLibrary(at: directory.subdirectory("watcher"), deviceName: "watcher")
        let server = try await fixture.token(for: "notes")
        try await eventually("the relayed change on the server") {
            try await Self.sync(watcher, fixture, server)
            return try watcher.store.changes(of: note.id).count == changes.count
        }
        let seen = try #require(try watcher.store.devices.all().first { $0.id == device.id })
        #expect(
            seen == Device(id: device.id, name: "iPad", person: "Anna"), "neither renamed nor given to Bob: \(seen)")

        // A proof in a device's first hello answers no session of the server's: 1008.
        let early = try RawWebSocket(
            port: fixture.server.port, library: "notes", token: bob, headers: ["Folio-Message-Formats: 2, 3, 4"])
        let unasked = SyncMessage.hello(
            SyncHello(
                device: device, session: 4, vectors: [:],
                proof: DeviceProof(signing: device, session: 1, with: iPad.store.key)))
        _ = early.socket.send(
            RawWebSocket.frame(
                opcode: 2,
                SyncFrame.message(channel: 4, bytes: unasked.encoded(format: SyncMessage.peopleFormatVersion))
                    .encoded()))
        #expect(try await offThePool { early.closeCode(within: .seconds(10)) } == 1008)

        // A proof signed by another key, and the iPad's own proof beside a hello that says Bob: 1008 each.
        let lie = Device(id: device.id, name: device.name, person: "Bob")
        for forgery in 0..<2 {
            let socket = try RawWebSocket(
                port: fixture.server.port, library: "notes", token: bob, headers: ["Folio-Message-Formats: 2, 3, 4"])
            let first = SyncMessage.hello(SyncHello(device: device, session: 5, vectors: [:]))
            _ = socket.socket.send(
                RawWebSocket.frame(opcode: 2, SyncFrame.message(channel: 5, bytes: first.encoded()).encoded()))
            // The server's hello says its session, which a proof is bound to.
            var serverSession: UInt64?
            while serverSession == nil, let frame = try await offThePool({ socket.nextFrame(within: .seconds(10)) }) {
                guard case .message(_, let bytes) = try? SyncFrame(decoding: frame.payload),
                    case .hello(let reply) = try? SyncMessage(decoding: bytes)
                else { continue }
                serverSession = reply.session
            }
            let session = try #require(serverSession)
            let mallory = DeviceKey.named("Mallory")
            let proof =
                forgery == 0
                ? DeviceProof(
                    publicKey: mallory.publicKey, session: session,
                    signature: mallory.signature(for: DeviceProof.signedBytes(of: lie, session: session)))
                : DeviceProof(signing: device, session: session, with: iPad.store.key)
            let proving = SyncMessage.hello(SyncHello(device: lie, session: 5, vectors: [:], proof: proof))
            _ = socket.socket.send(
                RawWebSocket.frame(
                    opcode: 2,
                    SyncFrame.message(channel: 5, bytes: proving.encoded(format: SyncMessage.peopleFormatVersion))
                        .encoded()))
            #expect(try await offThePool { socket.closeCode(within: .seconds(10)) } == 1008, "forgery \(forgery)")
        }
        try await Self.sync(watcher, fixture, server)
        #expect(try watcher.store.devices.all().first { $0.id == device.id }?.person == "Anna")
    }

    /// The server writes each client the newest format it reads among those the client lists at the upgrade
    /// (comma-separated, on any number of header lines, unknown ones ignored), and format 2 to a client that lists
    /// none: a client of format 3 never receives format 4.
    @Test func theServerWritesTheNewestFormatTheClientLists() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let cases: [([String], UInt8)] = [
            ([], 2), (["Folio-Message-Formats: 2"], 2), (["Folio-Message-Formats: 2, 3"], 3),
            (["Folio-Message-Formats: 2, 3, 4"], 4), (["Folio-Message-Formats: 2,4, x, 9"], 4),
            (["Folio-Message-Formats: 2", "Folio-Message-Formats: 3"], 3),
        ]
        let named = Device(id: Device.named("Lister").id, name: "Lister")
        for (headers, expected) in cases {
            let socket = try RawWebSocket(port: fixture.server.port, library: "notes", token: token, headers: headers)
            #expect(socket.upgraded)
            let hello = SyncMessage.hello(SyncHello(device: named, session: 3, vectors: [:]))
            _ = socket.socket.send(
                RawWebSocket.frame(opcode: 2, SyncFrame.message(channel: 3, bytes: hello.encoded()).encoded()))
            var format: UInt8?
            while format == nil, let frame = try await offThePool({ socket.nextFrame(within: .seconds(10)) }) {
                guard case .message(_, let bytes) = try? SyncFrame(decoding: frame.payload) else { continue }
                format = SyncMessage.format(of: bytes)
            }
            #expect(format == expected, "\(headers)")
            socket.close()
        }
    }
}
