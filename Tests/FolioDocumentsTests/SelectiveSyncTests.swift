import Folio
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// The container decides what syncs: a document in `local` stays on its device, through the shared folder and the
/// in-memory cloud alike; moved to `shared` it goes out with its whole history; moved back to `local` it stops going
/// out, its move included, and stops taking in what the others still make of it.
@Suite struct SelectiveSyncTests {
    /// Two libraries and the two transports they sync through: a shared folder, and a cloud store over the in-memory
    /// network.
    struct Devices {
        let fixtures: (iPad: LibraryFixture, mac: LibraryFixture)
        let folder: TemporaryDirectory
        let iPad: DocumentLibrary
        let mac: DocumentLibrary
        let cloud: ChangeLogStore

        init() async throws {
            fixtures = (try LibraryFixture(seed: 41), try LibraryFixture(seed: 42))
            folder = try TemporaryDirectory()
            iPad = try fixtures.iPad.library()
            mac = try fixtures.mac.library()
            cloud = try ChangeLogStore(
                at: folder.file("cloud.sqlite"), device: .named("Cloud"),
                clock: ManualClock(start: LibraryFixture.start))
        }

        /// Both devices sync through both transports, the iPad first, twice round.
        func syncBoth() async throws {
            let transports: [any SyncTransport] = [
                FolderTransport(root: folder.url.appendingPathComponent("sync")),
                InMemoryTransport(hub: InMemoryHub(seed: 5), peer: cloud),
            ]
            for _ in 0..<2 {
                for library in [iPad, mac] {
                    for transport in transports { try await library.sync(through: transport) }
                }
            }
        }

        func names(on library: DocumentLibrary) async throws -> [String] {
            try await library.documents().map(\.displayName)
        }
    }

    /// A document created with the default container stays on its device; one created in `shared` syncs.
    @Test func aDocumentCreatedInLocalIsNeitherAnnouncedNorSent() async throws {
        let devices = try await Devices()
        let diary = try await devices.iPad.create(TextDocument.self, named: "Diary", contents: TextDocument(text: "x"))
        _ = try await devices.iPad.create(TextDocument.self, named: "Notes", in: .shared)
        try await devices.syncBoth()
        await #expect(try devices.names(on: devices.mac) == ["Notes"])
        #expect(try devices.cloud.documents().contains(diary.id) == false, "the cloud never got it")
        let written = try FileManager.default.contentsOfDirectory(
            atPath: devices.folder.url.appendingPathComponent("sync/\(devices.iPad.device.id)").path)
        #expect(
            written == [try await devices.mac.documents()[0].id.description], "only the shared one is in the folder")
        #expect(try devices.iPad.store.unpublished.documents() == [diary.id])
    }

    /// Moved to `shared`, a local document arrives with every change made while it was local.
    @Test func movingToSharedPublishesTheWholeHistory() async throws {
        let devices = try await Devices()
        let diary = try await devices.iPad.create(
            TextDocument.self, named: "Diary", contents: TextDocument(text: "a\n"))
        try await diary.edit(.append("b\n"))
        try await diary.commit()
        try await devices.syncBoth()
        await #expect(try devices.names(on: devices.mac).isEmpty)

        try await devices.iPad.move(diary.id, to: .shared)
        #expect(try devices.iPad.store.unpublished.documents().isEmpty)
        try await devices.syncBoth()
        let onMac = try await devices.mac.open(diary.id, as: TextDocument.self)
        #expect(await onMac.model.text == "a\nb\n")
        #expect(try devices.mac.store.changes(of: diary.id) == devices.iPad.store.changes(of: diary.id))
        #expect(try await devices.mac.info(of: diary.id)?.container == .shared)
    }

    /// Moved back to `local` on the Mac, the move and the Mac's later edits stay on the Mac, and the iPad's edits
    /// stay off it; moved to `shared` again, both sides' edits meet.
    @Test func movingBackToLocalStopsPublishingTheMoveAndWhatFollows() async throws {
        let devices = try await Devices()
        let notes = try await devices.iPad.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "plan\n"))
        let other = try await devices.iPad.create(TextDocument.self, named: "Other", in: .shared)
        try await devices.syncBoth()
        let onMac = try await devices.mac.open(notes.id, as: TextDocument.self)

        try await devices.mac.move(notes.id, to: .local)
        #expect(try devices.mac.store.unpublished.documents() == [notes.id])
        let move = try #require(try devices.mac.store.changes(of: notes.id).last)
        try await onMac.edit(.append("mac\n"))
        try await notes.edit(.insert(at: 0, text: "ipad\n"))
        try await other.edit(.append("still syncs\n"))
        try await devices.syncBoth()

        #expect(try devices.iPad.store.change(move.hash, of: notes.id) == nil, "the move stays on the Mac")
        #expect(try devices.iPad.store.vector(of: notes.id)[devices.mac.device.id] == 0)
        #expect(try devices.cloud.vector(of: notes.id)[devices.mac.device.id] == 0)
        #expect(try await devices.iPad.info(of: notes.id)?.container == .shared)
        #expect(try devices.mac.store.vector(of: notes.id)[devices.iPad.device.id] == 2, "the iPad's edit stays off")
        #expect(await onMac.model.text == "plan\nmac\n")
        #expect(await notes.model.text == "ipad\nplan\n")
        let otherOnMac = try await devices.mac.open(other.id, as: TextDocument.self)
        #expect(await otherOnMac.model.text == "still syncs\n", "other documents are unaffected")

        try await devices.mac.move(notes.id, to: .shared)
        try await devices.syncBoth()
        #expect(try devices.iPad.store.vector(of: notes.id) == devices.mac.store.vector(of: notes.id))
        #expect(try devices.iPad.store.change(move.hash, of: notes.id) != nil)
        #expect(try await devices.iPad.info(of: notes.id)?.container == .shared)
    }

    /// An imported document follows its container as a created one does.
    @Test func anImportIntoLocalStaysOnItsDevice() async throws {
        let devices = try await Devices()
        let source = devices.folder.file("outside.txt")
        try Data("outside\n".utf8).write(to: source)
        let kept = try await devices.iPad.importFile(at: source, as: TextDocument.self)
        let sent = try await devices.iPad.importFile(at: source, as: TextDocument.self, named: "Sent", into: .shared)
        try await devices.syncBoth()
        #expect(try await devices.mac.documents().map(\.id) == [sent.id])
        #expect(try devices.iPad.store.unpublished.documents() == [kept.id])
    }
}
