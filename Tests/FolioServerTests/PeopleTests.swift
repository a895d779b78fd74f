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

    /// A token's `name` claim is checked as the subject is: a control character or more than 256 bytes refuse it.
    @Test func aTokensNameIsChecked() async throws {
        let backend = Backend()
        let directory = try TemporaryDirectory()
        let fixture = try await ServerFixture.start(arguments: try backend.arguments(in: directory))
        for name in ["", "Anna\u{7}", String(repeating: "n", count: 257)] {
            var claims = AppTokenTests.claims("ada")
            claims["name"] = name
            let status = try await fixture.get("/v1/libraries/notes/sync", token: try backend.token(claims)).status
            #expect(status == 401, "name \(name.prefix(10).debugDescription)")
        }
        var claims = AppTokenTests.claims("ada")
        claims["name"] = "Ada Lovelace"
        #expect(try await fixture.get("/v1/libraries/notes/sync", token: try backend.token(claims)).status == 426)
    }
}
