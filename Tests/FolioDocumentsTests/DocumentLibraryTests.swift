import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// The library: listing and querying, renaming, moving between containers, deleting and restoring, name collisions
/// and names that cannot be file names. Each is a logged change, and the document's file follows it.
@Suite struct DocumentLibraryTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    /// Creates and saves a document of `Model` named `name`, one second after the previous one.
    @discardableResult
    func make<Model: DocumentModel>(
        _ library: DocumentLibrary, _ type: Model.Type, _ name: String, _ operation: Model.Operation,
        in container: DocumentContainer = .local
    ) async throws -> DocumentInfo {
        fixture.clock.advance(byMilliseconds: 1_000)
        let document = try await library.create(type, named: name, in: container)
        try await document.edit(operation)
        try await document.save()
        try await document.close()
        return try #require(try await library.info(of: document.id))
    }

    @Test func listsAndQueriesByNameTypeAndDate() async throws {
        let library = try fixture.library()
        let notes = try await make(library, TextDocument.self, "Notes", .append("n"))
        let people = try await make(library, RecordsDocument.self, "People", .add(record: "r1", fields: [:]))
        let album = try await make(library, PagesDocument.self, "Album", .setText("a"), in: .shared)
        let diary = try await make(library, TextDocument.self, "Diary", .append("d"))

        #expect(try await library.documents().map(\.displayName) == ["Album", "Diary", "Notes", "People"])
        #expect(
            try await library.documents(where: { $0.typeIdentifier == TextDocument.documentType.identifier }).map(\.id)
                == [
                    diary.id, notes.id,
                ])
        #expect(try await library.documents(where: { $0.displayName.hasPrefix("P") }).map(\.id) == [people.id])
        #expect(try await library.documents(where: { $0.container == .shared }).map(\.id) == [album.id])
        let cutoff = LibraryFixture.start.advanced(by: 2_500)
        #expect(
            try await library.documents(where: { $0.modificationDate > cutoff }).map(\.displayName) == [
                "Album", "Diary",
            ])
        #expect(
            try await library.documents(where: { $0.creationDate < cutoff }).map(\.displayName) == ["Notes", "People"])

        #expect(notes.creationDate == LibraryFixture.start.advanced(by: 1_000))
        #expect(notes.typeIdentifier == "com.folio.text")
        #expect(notes.container == .local)
        #expect(notes.isDeleted == false)
        #expect(Disk.names(in: fixture.documents) == ["Diary.txt", "Notes.txt", "People.folio-records"])
        #expect(Disk.names(in: fixture.shared) == ["Album.folio-pages"])
    }

    @Test func aLaterEditMovesTheModificationDate() async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, "Notes", .append("n"))
        fixture.clock.advance(byMilliseconds: 60_000)
        let document = try await library.open(info.id, as: TextDocument.self)
        try await document.edit(.append("!"))
        #expect(try await library.info(of: info.id)?.modificationDate == LibraryFixture.start.advanced(by: 61_000))
        #expect(try await library.info(of: info.id)?.creationDate == info.creationDate)
    }

    /// A library made with no arguments but its directory knows the built-in types and their usual extensions.
    @Test func theBuiltInTypesAreRegisteredByDefault() async throws {
        let library = try DocumentLibrary(at: fixture.directory.url.appendingPathComponent("Plain"))
        #expect(library.types.types.map(\.identifier) == DocumentTypeRegistry.builtIn.types.map(\.identifier))
        let shopping = try await library.create(TextDocument.self, named: "Shopping")
        try await shopping.edit(.append("milk\n"))
        try await shopping.save()
        #expect(try await shopping.fileURL.lastPathComponent == "Shopping.txt")
        let pages = try await library.create(PagesDocument.self, named: "Trip")
        try await pages.save()
        #expect(try await pages.fileURL.lastPathComponent == "Trip.folio-pages")
        try await shopping.close()
        try await pages.close()
    }

    /// An app's own types come on top of the built-in ones.
    @Test func anAppsTypesAddToTheBuiltInOnes() throws {
        let notes = DocumentType(identifier: "com.example.notes", fileExtensions: ["note"], isPackage: false)
        let library = try DocumentLibrary(
            at: fixture.directory.url.appendingPathComponent("Typed"), types: DocumentTypeRegistry([notes]))
        #expect(library.types.type(forExtension: "note") == notes)
        #expect(library.types.type(forExtension: "txt") == TextDocument.documentType)
    }

    @Test func renameRenamesTheFile() async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, "Notes", .append("text"))
        try await library.rename(info.id, to: "Journal")

        #expect(try await library.info(of: info.id)?.displayName == "Journal")
        #expect(fixture.documentNames == ["Journal.txt"])
        #expect(try fixture.text(at: fixture.documentFile("Journal.txt")) == "text")
        #expect(try library.log(of: info.id).last?.kind == .lifecycle(.rename(to: "Journal")))
        let document = try await library.open(named: "Journal", as: TextDocument.self)
        #expect(await document.model.text == "text")
        await #expect(throws: DocumentError.self) { try await library.open(named: "Notes", as: TextDocument.self) }
    }

    @Test func aDocumentRenamedWhileOpenSavesUnderItsNewName() async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, "Notes", .append("text"))
        let document = try await library.open(info.id, as: TextDocument.self)
        try await library.rename(info.id, to: "Journal")
        try await document.edit(.append(" and more"))
        try await document.save()
        #expect(fixture.documentNames == ["Journal.txt"], "the old name is not written again")
        #expect(try fixture.text(at: fixture.documentFile("Journal.txt")) == "text and more")
        #expect(await document.displayName == "Journal")
    }

    @Test func moveCarriesTheFileBetweenContainers() async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, "Notes", .append("text"))
        try await library.move(info.id, to: .shared)
        #expect(try await library.info(of: info.id)?.container == .shared)
        #expect(Disk.names(in: fixture.documents).isEmpty)
        #expect(Disk.names(in: fixture.shared) == ["Notes.txt"])
        #expect(try library.log(of: info.id).last?.kind == .lifecycle(.move(to: .shared)))

        try await library.move(info.id, to: .local)
        #expect(Disk.names(in: fixture.shared).isEmpty)
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "text")

        // Moving to where it already is records the event and moves nothing.
        try await library.move(info.id, to: .local)
        #expect(fixture.documentNames == ["Notes.txt"])
    }

    @Test func deleteRemovesTheFileAndRestoreBringsTheDocumentBack() async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, "Notes", .append("text"))
        try await make(library, TextDocument.self, "Other", .append("other"))
        try await library.delete(info.id)

        #expect(fixture.documentNames == ["Other.txt"])
        #expect(try await library.documents().map(\.displayName) == ["Other"])
        let all = try await library.documents(includingDeleted: true)
        #expect(all.map(\.displayName) == ["Notes", "Other"])
        #expect(all.first?.isDeleted == true)
        let again = try await #require(throws: DocumentError.self) { try await library.delete(info.id) }
        #expect(again.code == .notFound)
        await #expect(throws: DocumentError.self) { try await library.rename(info.id, to: "Renamed") }

        try await library.restore(info.id)
        #expect(try await library.documents().map(\.displayName) == ["Notes", "Other"])
        let notDeleted = try await #require(throws: DocumentError.self) { try await library.restore(info.id) }
        #expect(notDeleted.code == .notFound)
        let document = try await library.open(info.id, as: TextDocument.self)
        #expect(await document.model.text == "text", "history was kept")
        try await document.save()
        #expect(fixture.documentNames == ["Notes.txt", "Other.txt"])
    }

    @Test func aSecondDocumentWithTheSameNameGetsANumberedFile() async throws {
        let library = try fixture.library()
        let first = try await make(library, TextDocument.self, "Notes", .append("first"))
        let second = try await make(library, TextDocument.self, "Notes", .append("second"))
        let third = try await make(library, TextDocument.self, "Notes", .append("third"))
        #expect(fixture.documentNames == ["Notes 2.txt", "Notes 3.txt", "Notes.txt"])
        #expect(
            try await library.fileURL(for: try #require(try await library.info(of: second.id)))
                == fixture.documentFile("Notes 2.txt"))
        #expect(try fixture.text(at: fixture.documentFile("Notes 3.txt")) == "third")
        // The same name in the other container is no collision.
        let shared = try await make(library, TextDocument.self, "Notes", .append("shared"), in: .shared)
        #expect(try await library.fileURL(for: shared) == fixture.shared.appendingPathComponent("Notes.txt"))
        _ = (first, third)
    }

    @Test func deletingANamesakeDoesNotShiftTheOthersFiles() async throws {
        let library = try fixture.library()
        let first = try await make(library, TextDocument.self, "Notes", .append("first"))
        let second = try await make(library, TextDocument.self, "Notes", .append("second"))
        try await library.delete(first.id)
        #expect(fixture.documentNames == ["Notes 2.txt"])

        let document = try await library.open(second.id, as: TextDocument.self)
        try await document.edit(.append("!"))
        try await document.save()
        try await document.close()
        #expect(fixture.documentNames == ["Notes 2.txt"])

        try await library.restore(first.id)
        let restored = try await library.open(first.id, as: TextDocument.self)
        #expect(await restored.model.text == "first")
        try await restored.save()
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "first")
        #expect(try fixture.text(at: fixture.documentFile("Notes 2.txt")) == "second!")
        #expect(try library.log(of: first.id).filter(\.isBaseline).isEmpty, "no document took in another's file")
        #expect(try library.log(of: second.id).filter(\.isBaseline).isEmpty)
    }

    @Test(arguments: [
        "", "a/b", "../escape", "/absolute", ".hidden", " padded", "padded ", "nul\u{0}inside",
        String(repeating: "x", count: 201),
        String(repeating: "é", count: 101),
    ])
    func namesThatCannotBeFileNamesAreRefused(name: String) async throws {
        let library = try fixture.library()
        let error = try await #require(throws: DocumentError.self) {
            try await library.create(TextDocument.self, named: name)
        }
        #expect(error.code == .invalidName)
        #expect(try await library.documents(includingDeleted: true).isEmpty, "nothing was recorded")

        let info = try await make(library, TextDocument.self, "Notes", .append("text"))
        let renameError = try await #require(throws: DocumentError.self) { try await library.rename(info.id, to: name) }
        #expect(renameError.code == .invalidName)
        #expect(try await library.info(of: info.id)?.displayName == "Notes")
        #expect(fixture.documentNames == ["Notes.txt"])
        #expect(
            Disk.names(in: fixture.root).sorted() == [".folio", "Documents", "Shared"], "nothing was written outside")
    }

    @Test(arguments: ["x", "Ünïcødé ✓", "a.b.c", "trailing.", String(repeating: "x", count: 200), "名前"])
    func ordinaryNamesAreAccepted(name: String) async throws {
        let library = try fixture.library()
        let info = try await make(library, TextDocument.self, name, .append("text"))
        #expect(info.displayName == name)
        #expect(fixture.documentNames == ["\(name).txt"])
    }

    @Test func operationsOnAnUnknownDocumentFail() async throws {
        let library = try fixture.library()
        let unknown = DocumentID(using: SeededIdentifierSource(seed: 42))
        #expect(try await library.info(of: unknown) == nil)
        let errors = [
            try await #require(throws: DocumentError.self) { try await library.rename(unknown, to: "X") },
            try await #require(throws: DocumentError.self) { try await library.move(unknown, to: .shared) },
            try await #require(throws: DocumentError.self) { try await library.delete(unknown) },
            try await #require(throws: DocumentError.self) { try await library.restore(unknown) },
        ]
        #expect(errors.map(\.code) == [.notFound, .notFound, .notFound, .notFound])
        #expect(try library.store.documents().isEmpty, "nothing was recorded for the unknown document")
    }
}
