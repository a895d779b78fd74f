import Folio
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// Edits that merge are not a conflict: no device records anything for them. A conflict a person settles is settled
/// once, and the loss ledger holds that one decision.
@Suite struct OneResolutionPerConflictTests {
    /// The README's first program, asserted: two devices under `merge` syncing through a folder.
    struct Notes {
        let folder: TemporaryDirectory
        let fixtures: [LibraryFixture]
        let iPad: DocumentLibrary
        let mac: DocumentLibrary
        let transport: FolderTransport
        let onIPad: Document<TextDocument>
        let onMac: Document<TextDocument>

        init() async throws {
            folder = try TemporaryDirectory()
            fixtures = [try LibraryFixture(seed: 81), try LibraryFixture(seed: 82)]
            func library(_ fixture: LibraryFixture) throws -> DocumentLibrary {
                try DocumentLibrary(
                    at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
                    identifiers: fixture.identifiers, autosave: .manual,
                    conflictPolicy: ConflictPolicy(default: .merge), backgroundWork: false)
            }
            iPad = try library(fixtures[0])
            mac = try library(fixtures[1])
            transport = FolderTransport(root: folder.url)
            onIPad = try await iPad.create(
                TextDocument.self, named: "Shopping", in: .shared, contents: TextDocument(text: "milk\neggs\nbread\n"))
            try await iPad.sync(through: transport)
            try await mac.sync(through: transport)
            onMac = try await mac.open(named: "Shopping", as: TextDocument.self)
        }

        func syncBoth() async throws {
            try await iPad.sync(through: transport)
            try await mac.sync(through: transport)
            try await iPad.sync(through: transport)
        }

        /// The resolutions of the log of `library`, oldest first.
        func resolutions(in library: DocumentLibrary) throws -> [Change] {
            try library.store.changes(of: onIPad.id, since: VersionVector()).filter {
                if case .resolution = $0.kind { true } else { false }
            }
        }
    }

    /// Different lines edited on both devices merge silently: nothing is decided, so neither device records
    /// anything, and syncing again makes nothing new.
    @Test func editsThatMergeRecordNothing() async throws {
        let notes = try await Notes()
        try await notes.onIPad.edit(.replace("oat milk\neggs\nbread\n"))
        try await notes.onMac.edit(.replace("milk\neggs\nrye bread\n"))
        try await notes.syncBoth()
        for document in [notes.onIPad, notes.onMac] {
            #expect(await document.model.text == "oat milk\neggs\nrye bread\n")
            #expect(await !document.state.contains(.inConflict))
            #expect(try await document.lossLedger().isEmpty)
        }
        for library in [notes.iPad, notes.mac] {
            #expect(try notes.resolutions(in: library).isEmpty)
            #expect(try library.store.heads(of: notes.onIPad.id).count == 2)
        }
        let count = try notes.iPad.store.changeCount()
        try await notes.syncBoth()
        #expect(try notes.iPad.store.changeCount() == count)
    }

    /// The rest of the README's program: one word replaced two ways waits for the person with two versions, the
    /// person keeps the Mac's, and the loss ledger holds one resolution per conflict.
    @Test func theFirstProgramSettlesEachConflictOnce() async throws {
        let notes = try await Notes()
        try await notes.onIPad.edit(.replace("oat milk\neggs\nbread\n"))
        try await notes.onMac.edit(.replace("milk\neggs\nrye bread\n"))
        try await notes.syncBoth()
        try await notes.onIPad.edit(.replace("soy milk\neggs\nrye bread\n"))
        try await notes.onMac.edit(.replace("almond milk\neggs\nrye bread\n"))
        try await notes.syncBoth()
        let versions = try await notes.onMac.versions()
        #expect(
            Set(versions.map { "\($0.savingDevice.id == notes.mac.device.id ? "Mac" : "iPad"): \($0.contents.text)" })
                == ["iPad: soy milk\neggs\nrye bread\n", "Mac: almond milk\neggs\nrye bread\n"])
        #expect(await notes.onIPad.state.contains(.inConflict))
        let macs = try #require(versions.first { $0.savingDevice.id == notes.mac.device.id })
        try await notes.onMac.replace(with: macs)
        try await notes.syncBoth()
        for document in [notes.onIPad, notes.onMac] {
            #expect(await document.model.text == "almond milk\neggs\nrye bread\n")
            #expect(await !document.state.contains(.inConflict))
        }
        let ledger = try await notes.onIPad.lossLedger()
        #expect(ledger.map(\.strategy) == [.userChoice])
        #expect(ledger.last?.discarded.map(\.device.id) == [notes.iPad.device.id])
        #expect(try notes.resolutions(in: notes.iPad).count == 1)
    }

    /// Two devices that each receive the other's edit alone, straight from the other's log, show the same merge
    /// and record nothing; after a full sync they still agree.
    @Test func devicesThatMergeAtOnceAgreeWithoutRecording() async throws {
        let notes = try await Notes()
        try await notes.onIPad.edit(.replace("oat milk\neggs\nbread\n"))
        try await notes.onMac.edit(.replace("milk\neggs\nrye bread\n"))
        try exchange(notes.iPad, notes.mac, notes.onIPad.id)
        try await notes.onIPad.refresh()
        try await notes.onMac.refresh()
        try await notes.syncBoth()
        for (library, document) in [(notes.iPad, notes.onIPad), (notes.mac, notes.onMac)] {
            #expect(await document.model.text == "oat milk\neggs\nrye bread\n")
            #expect(await !document.state.contains(.inConflict))
            #expect(try notes.resolutions(in: library).isEmpty)
        }
    }
}
