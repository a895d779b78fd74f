import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// A document's file changed by another program: noticed at open and at save, recorded as a baseline change made
/// on the version that was saved, never silently overwritten, and the app's own edits stay in the log.
@Suite struct DocumentExternalModificationTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    var file: URL { fixture.documentFile("Notes.txt") }

    /// Writes `text` over the document's file as another program would.
    func writeFromOutside(_ text: String, to url: URL? = nil) throws {
        try Data(text.utf8).write(to: url ?? file)
    }

    /// A text document with "in the app" saved, then closed.
    func savedDocument(_ library: DocumentLibrary) async throws -> (id: DocumentID, savedHead: Change) {
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("in the app"))
        try await document.save()
        let head = await document.currentHead
        try await document.close()
        return (document.id, head)
    }

    @Test func aFileChangedWhileClosedIsNoticedAtOpen() async throws {
        let library = try fixture.library()
        let (id, savedHead) = try await savedDocument(library)
        try writeFromOutside("changed by another program")

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == "changed by another program")
        let log = try library.log(of: id)
        let baseline = try #require(log.last)
        #expect(baseline.baselineContents == .data(Data("changed by another program".utf8)))
        #expect(baseline.parents == [savedHead.hash], "made on the version that was saved")
        #expect(try log.flatMap { try $0.operations(as: TextDocument.Operation.self) } == [.append("in the app")])
        #expect(await document.hasUnsavedChanges == false, "the file already holds this version")

        // Noticed once: reopening finds nothing new.
        try await document.save()
        try await document.close()
        let again = try await library.open(id, as: TextDocument.self)
        #expect(await again.model.text == "changed by another program")
        #expect(try library.log(of: id).filter(\.isBaseline).count == 1)
    }

    @Test func aFileChangedWhileOpenIsNoticedAtSaveAndNotOverwritten() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("saved"))
        try await document.save()
        let savedHead = await document.currentHead
        try await document.edit(.append(" and edited"))
        let inAppEdit = try #require(try library.edits(of: document.id).last)
        try writeFromOutside("rewritten outside")

        try await document.save()
        #expect(try fixture.text(at: file) == "rewritten outside", "the outside version was not overwritten")
        #expect(await document.model.text == "rewritten outside")
        let log = try library.log(of: document.id)
        let baseline = try #require(log.first { $0.isBaseline })
        #expect(baseline.parents == [savedHead.hash], "made on the version that was saved, not on the app's edit")
        // The app's edit is still in the log.
        let stored = try #require(try library.store.changes(of: document.id).first { $0.id == inAppEdit.id })
        #expect(try stored.operations(as: TextDocument.Operation.self) == [.append(" and edited")])
        // The outside version is authored by the device's identity for other programs, so it is concurrent with
        // the app's edit (a device's own changes form one line): two heads, and the log stays consistent.
        #expect(baseline.id.device == library.externalDevice.id)
        #expect(baseline.id.device != library.device.id)
        #expect(Set(try library.store.heads(of: document.id).map(\.hash)) == [baseline.hash, stored.hash])
        try library.store.checkInvariants()
        #expect(try library.store.devices.all().contains { $0.name == "\(library.device.name) (another program)" })
    }

    @Test func aSameSizeChangeIsNoticedByItsModificationTime() async throws {
        let library = try fixture.library()
        let (id, _) = try await savedDocument(library)
        try writeFromOutside("IN THE APP")
        let later = Date(timeIntervalSince1970: 2_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: file.path)

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == "IN THE APP")
        #expect(try library.log(of: id).filter(\.isBaseline).count == 1)
    }

    @Test func aTouchedButUnchangedFileIsNotABaseline() async throws {
        let library = try fixture.library()
        let (id, _) = try await savedDocument(library)
        try writeFromOutside("in the app")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 2_000_000_000)], ofItemAtPath: file.path)

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == "in the app")
        #expect(try library.log(of: id).filter(\.isBaseline).isEmpty)
    }

    @Test func aFileRemovedOutsideIsWrittenAgainAtTheNextSave() async throws {
        let library = try fixture.library()
        let (id, _) = try await savedDocument(library)
        try FileManager.default.removeItem(at: file)

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == "in the app")
        try await document.edit(.append("!"))
        try await document.save()
        #expect(try fixture.text(at: file) == "in the app!")
        #expect(try library.log(of: id).filter(\.isBaseline).isEmpty)
    }

    @Test func aPackageMemberEditedInPlaceIsNoticed() async throws {
        let library = try fixture.library()
        let document = try await library.create(PagesDocument.self, named: "Album")
        try await document.edit(.setText("the text"))
        try await document.edit(.putImage(name: "a.png", bytes: Data(repeating: 7, count: 32)))
        try await document.save()
        try await document.close()
        let package = fixture.documentFile("Album.folio-pages")

        // Closing and reopening an unchanged package records nothing.
        try await library.open(document.id, as: PagesDocument.self).close()
        #expect(try library.log(of: document.id).filter(\.isBaseline).isEmpty)

        try Data("edited in another editor".utf8).write(to: package.appendingPathComponent("text.txt"))
        let reopened = try await library.open(document.id, as: PagesDocument.self)
        #expect(await reopened.model.text == "edited in another editor")
        #expect(await reopened.model.images["a.png"] == Data(repeating: 7, count: 32))
        #expect(try library.log(of: document.id).filter(\.isBaseline).count == 1)

        // The document saves again, and the package then matches its manifest.
        try await reopened.edit(.setText("edited in Folio again"))
        try await reopened.save()
        let read = try SavePipeline().readPackage(at: package)
        #expect(read["text.txt"]?.contents == Data("edited in Folio again".utf8))
        try await reopened.close()
        #expect(try library.log(of: document.id).filter(\.isBaseline).count == 1)
    }

    @Test func aFileChangedOutsideAfterARenameIsStillNoticed() async throws {
        let library = try fixture.library()
        let (id, _) = try await savedDocument(library)
        try await library.rename(id, to: "Journal")
        let renamed = fixture.documentFile("Journal.txt")
        #expect(fixture.documentNames == ["Journal.txt"])
        try writeFromOutside("changed after the rename", to: renamed)

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == "changed after the rename")
        try await document.edit(.append("!"))
        try await document.save()
        #expect(try fixture.text(at: renamed) == "changed after the rename!")
    }

    @Test func aFileTheModelCannotLoadIsRefusedAndNothingIsRecorded() async throws {
        let library = try fixture.library()
        let (id, _) = try await savedDocument(library)
        try Data([0xFF, 0xFE, 0x00, 0xC3]).write(to: file)
        let before = try library.log(of: id)

        let error = try await #require(throws: DocumentError.self) { try await library.open(id, as: TextDocument.self) }
        #expect(error.code == .invalidContents)
        let cause = try #require(error.cause as? ModelError)
        #expect(
            error.description == "the file of Notes is not a valid com.folio.text document: \(cause.message)",
            "the reason, once")
        #expect(try library.log(of: id) == before, "nothing was half-applied")
    }
}

extension DocumentExternalModificationTests {
    @Test func aFileMadeUnreadableWhileOpenFailsTheSaveButNeitherEditNorClose() async throws {
        let policy = AutosavePolicy(idleInterval: nil, unsavedChangeLimit: 2, saveOnClose: true, groupingInterval: 0)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("kept"))
        try await document.save()
        try Data([0xFF, 0xFE, 0x00, 0xC3]).write(to: file)

        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect(error.code == .invalidContents)
        #expect(await document.state == .savingError)

        // The next edit reaches the autosave limit: the autosave fails, the edit does not.
        try await document.edit(.append(" and more"))
        try await document.edit(.append("!"))
        #expect(await document.model.text == "kept and more!")
        #expect(await document.hasUnsavedChanges)

        try await document.close()
        #expect(await document.state.contains(.closed))
        #expect(try Data(contentsOf: file) == Data([0xFF, 0xFE, 0x00, 0xC3]), "the outside file was not overwritten")
        #expect(try library.log(of: document.id).filter(\.isBaseline).isEmpty)
        let edits = try library.edits(of: document.id).flatMap { try $0.operations(as: TextDocument.Operation.self) }
        #expect(edits == [.append("kept"), .append(" and more"), .append("!")])
    }
}

/// A file system whose clock the test sets, so that "written a moment ago" and "written long ago" can be staged.
private final class ClockedFileSystem: FileSystem, @unchecked Sendable {
    let base = PosixFileSystem()
    var now = Date()

    func currentTime() -> Date { now }
    func itemKind(at url: URL) throws -> FileItemKind { try base.itemKind(at: url) }
    func attributes(at url: URL) throws -> FileAttributes { try base.attributes(at: url) }
    func contents(of url: URL) throws -> Data { try base.contents(of: url) }
    func contentsOfDirectory(at url: URL) throws -> [String] { try base.contentsOfDirectory(at: url) }
    func createDirectory(at url: URL) throws { try base.createDirectory(at: url) }
    func writeFile(_ data: Data, to url: URL) throws { try base.writeFile(data, to: url) }
    func synchronizeFile(at url: URL) throws { try base.synchronizeFile(at: url) }
    func synchronizeDirectory(at url: URL) throws { try base.synchronizeDirectory(at: url) }
    func rename(_ source: URL, to destination: URL) throws { try base.rename(source, to: destination) }
    func remove(at url: URL) throws { try base.remove(at: url) }
}

extension DocumentExternalModificationTests {
    /// Another program writes as many bytes as the app did, in the same timestamp tick (staged by putting the
    /// app's modification time back on the file): size and time match what was recorded, yet the change is found,
    /// because a file recorded a moment ago is checked by content.
    @Test func aSameSizeWriteInTheSameTickIsStillNoticed() async throws {
        let fileSystem = ClockedFileSystem()
        let library = try fixture.library(fileSystem: fileSystem)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("kept"))
        try await document.save()
        let written = try fileSystem.attributes(at: file).modificationDate

        try writeFromOutside("lost")
        try FileManager.default.setAttributes([.modificationDate: written], ofItemAtPath: file.path)
        let staged = try fileSystem.attributes(at: file).modificationDate
        #expect(abs(staged.timeIntervalSince(written)) < 0.000_5, "the outside write is staged in the same millisecond")
        fileSystem.now = written.addingTimeInterval(0.5)

        try await document.edit(.append("!"))
        try await document.save()
        let baselines = try library.log(of: document.id).filter(\.isBaseline)
        #expect(
            baselines.map(\.baselineContents) == [.data(Data("lost".utf8))], "the other program's version is in the log"
        )
        #expect(await document.state.contains(.inConflict), "its version and the app's compete; neither is lost")
    }
}
