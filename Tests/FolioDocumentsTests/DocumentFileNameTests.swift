import Folio
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// Each document has a file of its own on each device: namesakes (made on one device or apart on two) never share
/// one, a document keeps its file when a namesake arrives, and a rename or a move made on another device takes the
/// file along instead of leaving the old one behind.
@Suite struct DocumentFileNameTests {
    /// Writes `text` as the whole of a new document named `name`, saves and closes it.
    @discardableResult
    func make(_ library: DocumentLibrary, _ name: String, _ text: String, in container: DocumentContainer = .local)
        async throws -> DocumentID
    {
        let document = try await library.create(
            TextDocument.self, named: name, in: container, contents: TextDocument(text: text))
        try await document.save()
        try await document.close()
        return document.id
    }

    /// Opens the document, saves it (writing its file) and closes it, changing nothing.
    func saveOnce(_ id: DocumentID, in library: DocumentLibrary) async throws {
        let document = try await library.open(id, as: TextDocument.self)
        try await document.save()
        try await document.close()
    }

    /// Appends `text` to the document, saves it, closes it and reopens it, then returns what it shows.
    func appendSaveAndReopen(_ id: DocumentID, _ text: String, in library: DocumentLibrary) async throws -> String {
        let document = try await library.open(id, as: TextDocument.self)
        try await document.edit(.append(text))
        try await document.save()
        try await document.close()
        let reopened = try await library.open(id, as: TextDocument.self)
        let text = await reopened.model.text
        try await reopened.close()
        return text
    }

    @Test func aDocumentNamedLikeANumberedFileGetsAnotherNumber() async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        let numbered = try await make(library, "Notes 2", "numbered\n")
        let first = try await make(library, "Notes", "first\n")
        let second = try await make(library, "Notes", "second\n")
        #expect(fixture.documentNames == ["Notes 2.txt", "Notes 3.txt", "Notes.txt"])

        #expect(try await appendSaveAndReopen(numbered, "more\n", in: library) == "numbered\nmore\n")
        #expect(try await appendSaveAndReopen(first, "more\n", in: library) == "first\nmore\n")
        #expect(try await appendSaveAndReopen(second, "more\n", in: library) == "second\nmore\n")
        #expect(try fixture.text(at: fixture.documentFile("Notes 2.txt")) == "numbered\nmore\n")
        #expect(try fixture.text(at: fixture.documentFile("Notes 3.txt")) == "second\nmore\n")
        for id in [numbered, first, second] {
            #expect(
                try library.log(of: id).filter(\.isBaseline).count == 1,
                "only the initial contents: no document took in another's file")
        }
    }

    @Test func openingByANameSeveralDocumentsShareOpensTheFirstMade() async throws {
        let macFixture = try LibraryFixture(seed: 1)
        let iPadFixture = try LibraryFixture(seed: 2)
        let mac = try macFixture.library()
        let iPad = try iPadFixture.library()
        macFixture.clock.advance(byMilliseconds: 60_000)
        let earlier = try await make(iPad, "Notes", "earlier\n")
        let later = try await make(mac, "Notes", "later\n")
        try iPad.store.ingest(trusting: try mac.store.changes(of: later))
        // Listed by name then identity, the later one comes first: opening by name must not simply take the first.
        #expect(try await iPad.documents().first?.id == later)
        let opened = try await iPad.open(named: "Notes", as: TextDocument.self)
        #expect(opened.id == earlier)
        #expect(await opened.model.text == "earlier\n")
        try await opened.close()
    }

    /// The namesake made earlier on another device arrives after this device saved its own: this one keeps its file.
    @Test func aNamesakeFromAnotherDeviceDoesNotTakeThisDevicesFile() async throws {
        let macFixture = try LibraryFixture(seed: 1)
        let iPadFixture = try LibraryFixture(seed: 2)
        let mac = try macFixture.library()
        let iPad = try iPadFixture.library()
        let macNotes = try await make(mac, "Notes", "from the Mac\n")
        iPadFixture.clock.advance(byMilliseconds: 60_000)
        let iPadNotes = try await make(iPad, "Notes", "from the iPad\n")
        try iPad.store.ingest(trusting: try mac.store.changes(of: macNotes))
        #expect(try await iPad.documents().map(\.id).contains(macNotes))

        #expect(
            try await appendSaveAndReopen(macNotes, "seen on the iPad\n", in: iPad)
                == "from the Mac\nseen on the iPad\n")
        #expect(try await appendSaveAndReopen(iPadNotes, "more\n", in: iPad) == "from the iPad\nmore\n")
        #expect(iPadFixture.documentNames == ["Notes 2.txt", "Notes.txt"])
        #expect(try iPadFixture.text(at: iPadFixture.documentFile("Notes.txt")) == "from the iPad\nmore\n")
        #expect(try iPad.log(of: iPadNotes).filter(\.isBaseline).count == 1, "the Mac's text never became the iPad's")
        #expect(try iPad.log(of: macNotes).filter(\.isBaseline).count == 1)
    }

    @Test func aRenameAndAMoveMadeOnAnotherDeviceTakeTheFileAlong() async throws {
        let macFixture = try LibraryFixture(seed: 1)
        let iPadFixture = try LibraryFixture(seed: 2)
        let mac = try macFixture.library()
        let iPad = try iPadFixture.library()
        let notes = try await make(mac, "Notes", "text\n", in: .shared)
        try iPad.store.ingest(trusting: try mac.store.changes(of: notes))
        try await saveOnce(notes, in: iPad)
        #expect(Disk.names(in: iPadFixture.shared) == ["Notes.txt"])

        try await mac.rename(notes, to: "Ideas")
        try iPad.store.ingest(trusting: try mac.store.changes(of: notes, since: iPad.store.vector(of: notes)))
        #expect(try await appendSaveAndReopen(notes, "renamed\n", in: iPad) == "text\nrenamed\n")
        #expect(Disk.names(in: iPadFixture.shared) == ["Ideas.txt"], "no file is left under the old name")

        try await mac.move(notes, to: .local)
        try iPad.store.ingest(trusting: try mac.store.changes(of: notes, since: iPad.store.vector(of: notes)))
        #expect(try await appendSaveAndReopen(notes, "moved\n", in: iPad) == "text\nrenamed\nmoved\n")
        #expect(Disk.names(in: iPadFixture.shared).isEmpty)
        #expect(iPadFixture.documentNames == ["Ideas.txt"])
        #expect(try iPadFixture.text(at: iPadFixture.documentFile("Ideas.txt")) == "text\nrenamed\nmoved\n")
        #expect(
            try iPad.log(of: notes).filter(\.isBaseline).count == 1, "the moved file was known as the document's own")
    }

    /// Through a sync, a closed document's file follows at once: renamed, then removed.
    @Test func aSyncMakesTheFilesFollowRenamesAndDeletes() async throws {
        let macFixture = try LibraryFixture(seed: 1)
        let iPadFixture = try LibraryFixture(seed: 2)
        let mac = try macFixture.library()
        let iPad = try iPadFixture.library()
        let folder = try TemporaryDirectory()
        let transport = FolderTransport(root: folder.url)
        let notes = try await make(mac, "Notes", "text\n", in: .shared)
        try await mac.sync(through: transport)
        try await iPad.sync(through: transport)
        try await saveOnce(notes, in: iPad)
        #expect(Disk.names(in: iPadFixture.shared) == ["Notes.txt"])

        try await mac.rename(notes, to: "Ideas")
        try await mac.sync(through: transport)
        try await iPad.sync(through: transport)
        #expect(Disk.names(in: iPadFixture.shared) == ["Ideas.txt"])
        #expect(try iPadFixture.text(at: iPadFixture.shared.appendingPathComponent("Ideas.txt")) == "text\n")

        try await mac.delete(notes)
        try await mac.sync(through: transport)
        try await iPad.sync(through: transport)
        #expect(try await iPad.info(of: notes)?.isDeleted == true)
        #expect(Disk.names(in: iPadFixture.shared).isEmpty)
    }

    /// A document deleted elsewhere whose file another program changed here: the file stays, as that program left it.
    @Test func aDeleteLeavesAFileAnotherProgramChanged() async throws {
        let macFixture = try LibraryFixture(seed: 1)
        let iPadFixture = try LibraryFixture(seed: 2)
        let mac = try macFixture.library()
        let iPad = try iPadFixture.library()
        let notes = try await make(mac, "Notes", "text\n")
        try iPad.store.ingest(trusting: try mac.store.changes(of: notes))
        let document = try await iPad.open(notes, as: TextDocument.self)
        try await document.save()
        try Data("changed by another program\n".utf8).write(to: iPadFixture.documentFile("Notes.txt"))

        try await mac.delete(notes)
        try iPad.store.ingest(trusting: try mac.store.changes(of: notes, since: iPad.store.vector(of: notes)))
        try await document.refresh()
        #expect(await document.state.contains(.editingDisabled))
        #expect(try iPadFixture.text(at: iPadFixture.documentFile("Notes.txt")) == "changed by another program\n")

        // Unchanged, the file of a document deleted elsewhere goes when the open document learns of it.
        let other = try await make(mac, "Other", "other\n")
        try iPad.store.ingest(trusting: try mac.store.changes(of: other))
        let opened = try await iPad.open(other, as: TextDocument.self)
        try await opened.save()
        try await mac.delete(other)
        try iPad.store.ingest(trusting: try mac.store.changes(of: other, since: iPad.store.vector(of: other)))
        try await opened.refresh()
        #expect(iPadFixture.documentNames == ["Notes.txt"])
    }

    /// New namesakes saved at once (one autosave tick saving every new "Untitled"): each is given a file of its own
    /// before either has written one, and each file holds its own document.
    @Test func namesakesSavedAtOnceAreGivenAFileEach() async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        var documents: [Document<TextDocument>] = []
        for number in 1...6 {
            documents.append(
                try await library.create(
                    TextDocument.self, named: "Untitled", contents: TextDocument(text: "number \(number)\n")))
        }
        var urls: [URL] = []
        for document in documents { urls.append(try await document.fileURL) }
        #expect(Set(urls).count == 6, "given before any is saved: \(urls.map(\.lastPathComponent))")

        try await withThrowingTaskGroup { group in
            for document in documents { group.addTask { try await document.save() } }
            try await group.waitForAll()
        }
        #expect(
            fixture.documentNames == [
                "Untitled 2.txt", "Untitled 3.txt", "Untitled 4.txt", "Untitled 5.txt", "Untitled 6.txt",
                "Untitled.txt",
            ])
        for (number, document) in zip(1..., documents) {
            #expect(try fixture.text(at: try await document.fileURL) == "number \(number)\n")
            try await document.close()
        }
        let saved = try await library.savedFiles()
        #expect(saved.map(\.document) == documents.map(\.id).sorted())
        #expect(Set(saved.map(\.url)) == Set(urls))
    }

    /// Deleting a document never saved here leaves the file of its name alone: Folio did not write it.
    @Test func deletingADocumentNeverSavedLeavesAFileOfItsNameAlone() async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        try Disk.write("put here by hand\n", to: fixture.documentFile("Notes.txt"))
        let document = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "draft\n"))
        try await library.delete(document.id)
        try await document.close()
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "put here by hand\n")
    }

    /// A file Folio did not write already bears the new document's name (put in Documents by hand): the document
    /// takes the next name, and the file is left as it was.
    @Test func aNewDocumentNeverOverwritesAFileItDidNotWrite() async throws {
        let fixture = try LibraryFixture()
        let library = try fixture.library()
        try Disk.write("put here by hand\n", to: fixture.documentFile("Notes.txt"))
        let id = try await make(library, "Notes", "made in the app\n")
        #expect(fixture.documentNames == ["Notes 2.txt", "Notes.txt"])
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "put here by hand\n")
        #expect(try await appendSaveAndReopen(id, "more\n", in: library) == "made in the app\nmore\n")
        #expect(try fixture.text(at: fixture.documentFile("Notes 2.txt")) == "made in the app\nmore\n")
    }

    /// The device dies after a first save put the file in place and before it finished: the file is still the
    /// document's after the restart, not a stranger's to be avoided or taken in.
    @Test func aFirstSaveCutOffAfterItsWriteKeepsTheFile() async throws {
        let fixture = try LibraryFixture()
        let dryRun = FaultInjectingFileSystem()
        let probe = try await fixture.library(fileSystem: dryRun).create(
            TextDocument.self, named: "Probe", contents: TextDocument(text: "x"))
        try await probe.save()
        let steps = dryRun.steps
        let rename = try #require(steps.firstIndex { $0.kind == .rename }, "\(steps)")
        #expect(rename + 1 < steps.count, "a step after the rename to crash at: \(steps)")

        let crashing = try fixture.library(fileSystem: FaultInjectingFileSystem(faults: [.crash(atStep: rename + 1)]))
        let document = try await crashing.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "first\n"))
        await #expect(throws: DocumentError.self) { try await document.save() }
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "first\n", "the crash came after the rename")

        let restarted = try fixture.library()
        #expect(try await appendSaveAndReopen(document.id, "second\n", in: restarted) == "first\nsecond\n")
        #expect(fixture.documentNames == ["Notes.txt", "Probe.txt"])
        #expect(
            try restarted.log(of: document.id).filter(\.isBaseline).count == 1,
            "the file was not taken for another program's")
    }
}
