import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// A document's life: create, edit, save, close, reopen, revert; its state and the stream that reports it.
@Suite struct DocumentLifecycleTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    @Test func aNewDocumentIsOpenEmptyAndNotYetSaved() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        #expect(await document.state == .normal)
        #expect(await document.model == TextDocument())
        #expect(await document.displayName == "Notes")
        #expect(document.type == TextDocument.documentType)
        #expect(try await document.fileURL == fixture.documentFile("Notes.txt"))
        #expect(await document.modificationDate == LibraryFixture.start)
        #expect(await document.hasUnsavedChanges == false)
        #expect(await document.canUndo == false)
        #expect(await document.canRedo == false)
        #expect(fixture.documentNames.isEmpty, "nothing is written before the first save")
        #expect(
            try library.log(of: document.id).map(\.kind) == [
                .lifecycle(.create(name: "Notes", type: "com.folio.text", container: .local))
            ])
    }

    @Test func createWithContentsRecordsABaselineAfterTheCreation() async throws {
        let library = try fixture.library()
        let document = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "draft"))
        #expect(await document.model.text == "draft")
        let log = try library.log(of: document.id)
        #expect(log.count == 2)
        #expect(log.last?.baselineContents == .data(Data("draft".utf8)))
    }

    @Test func saveWritesTheFileAndClearsTheChangeCount() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("Hello"))
        try await document.edit(.append(", world"))
        #expect(await document.changeCount == 2)
        #expect(await document.hasUnsavedChanges)

        let report = try await document.save()
        #expect(report == SaveReport(bytesWritten: 12, filesWritten: 1))
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "Hello, world")
        #expect(await document.changeCount == 0)
        #expect(await document.hasUnsavedChanges == false)
        #expect(fixture.documentNames == ["Notes.txt"], "no temporary file is left")
    }

    @Test func closeEndsTheStateStreamAndRefusesFurtherUse() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("x"))
        let states = try await document.closeCollectingStates()
        #expect(states == [.closed])
        #expect(await document.state == .closed)

        let editError = try await #require(throws: DocumentError.self) { try await document.edit(.append("y")) }
        #expect(editError.code == .closed)
        #expect(editError.message == "Notes is closed")
        await #expect(throws: DocumentError.self) { try await document.save() }
        await #expect(throws: DocumentError.self) { try await document.undo() }
        await #expect(throws: DocumentError.self) { try await document.refresh() }
        // Closing twice is harmless.
        try await document.close()
        #expect(await document.model.text == "x", "a closed document still shows its model")
    }

    @Test func closeSavesWhenThePolicySaysSo() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: true))
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("kept"))
        try await document.close()
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "kept")
    }

    @Test func closeWithoutSavingKeepsTheEditsInTheLog() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("only in the log"))
        try await document.close()
        #expect(fixture.documentNames.isEmpty)

        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "only in the log")
        #expect(await reopened.state == .normal)
    }

    @Test func reopeningInANewLibraryRebuildsTheSameModel() async throws {
        let library = try fixture.library()
        let document = try await library.create(RecordsDocument.self, named: "People")
        try await document.edit(.add(record: "r1", fields: ["name": "Ann"]))
        try await document.edit(.add(record: "r2", fields: ["name": "Bob"]))
        try await document.edit(.set(record: "r1", field: "age", value: "41"))
        try await document.edit(.remove(record: "r2"))
        try await document.save()
        let expected = await document.model
        try await document.close()

        let reopened = try await fixture.library().open(named: "People", as: RecordsDocument.self)
        #expect(await reopened.model == expected)
        #expect(await reopened.model.ids == ["r1"])
        #expect(await reopened.hasUnsavedChanges == false)
        #expect(
            try library.log(of: document.id).filter(\.isBaseline).isEmpty,
            "an unchanged file is not read back as a baseline")
    }

    @Test func openingRefusesAnUnknownDocumentOrTheWrongType() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.close()

        let wrongType = try await #require(throws: DocumentError.self) {
            try await library.open(document.id, as: RecordsDocument.self)
        }
        #expect(wrongType.code == .wrongType)
        #expect(wrongType.message == "Notes is a com.folio.text document, not com.folio.records")

        let unknown = try await #require(throws: DocumentError.self) {
            try await library.open(DocumentID(using: SeededIdentifierSource(seed: 99)), as: TextDocument.self)
        }
        #expect(unknown.code == .notFound)
        let unnamed = try await #require(throws: DocumentError.self) {
            try await library.open(named: "Nope", as: TextDocument.self)
        }
        #expect(unnamed.code == .notFound)
    }

    @Test func revertReturnsToTheSavedFileAndKeepsTheDiscardedEditsInHistory() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, groupingInterval: 1_000))
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("saved"))
        try await document.save()
        try await document.edit(.append(" committed"))
        try await document.commit()
        fixture.clock.advance(byMilliseconds: 10)
        try await document.edit(.append(" open"))
        #expect(await document.model.text == "saved committed open")
        #expect(await document.changeCount == 2)

        try await document.revert()
        #expect(await document.model.text == "saved")
        #expect(await document.hasUnsavedChanges == false)
        let log = try library.log(of: document.id)
        #expect(log.last?.baselineContents == .data(Data("saved".utf8)), "the revert is a baseline of the saved file")
        let committed = try log.flatMap { try $0.operations(as: TextDocument.Operation.self) }
        #expect(committed.contains(.append(" committed")), "the reverted change stays in the log")
        #expect(!committed.contains(.append(" open")), "the open group was discarded, never committed")

        try await document.close()
        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "saved")
    }

    @Test func revertOfANeverSavedDocumentFailsAndKeepsTheOpenEdits() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, groupingInterval: 1_000))
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("typed"))
        let error = try await #require(throws: DocumentError.self) { try await document.revert() }
        #expect(error.code == .notFound)
        #expect(await document.model.text == "typed", "a refused revert changes nothing")
        try await document.close()
        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(
            await reopened.model.text == "typed", "the open group was committed on close, not dropped by the revert")
    }

    @Test func undoAfterRevertCannotReachBehindTheRevert() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("Hello"))
        try await document.save()
        try await document.edit(.insert(at: 0, text: "X"))
        try await document.revert()
        #expect(await document.model.text == "Hello")
        // The undo stack described the text before the revert; applied to the reverted text it would delete the "H".
        #expect(await document.canUndo == false)
        let error = try await #require(throws: DocumentError.self) { try await document.undo() }
        #expect(error.code == .nothingToUndo)
        #expect(await document.model.text == "Hello")
    }

    @Test func aDeletedDocumentOpensReadOnlyUntilRestored() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("text"))
        try await document.save()
        try await document.close()
        try await library.delete(document.id)

        let deleted = try await library.open(document.id, as: TextDocument.self)
        #expect(await deleted.state == .editingDisabled)
        #expect(await deleted.model.text == "text", "history is kept")
        let editError = try await #require(throws: DocumentError.self) { try await deleted.edit(.append("!")) }
        #expect(editError.code == .deleted)
        let saveError = try await #require(throws: DocumentError.self) { try await deleted.save() }
        #expect(saveError.code == .deleted)
        try await deleted.close()

        try await library.restore(document.id)
        let restored = try await library.open(document.id, as: TextDocument.self)
        #expect(await restored.state == .normal)
        try await restored.edit(.append("!"))
        try await restored.save()
        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "text!")
    }

    @Test func aDocumentDeletedWhileOpenIsNotWrittenBackBySaveOrClose() async throws {
        let library = try fixture.library(autosave: .standard)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("text"))
        try await document.save()
        try await library.delete(document.id)
        #expect(fixture.documentNames.isEmpty)

        let error = try await #require(throws: DocumentError.self) { try await document.save() }
        #expect(error.code == .deleted)
        #expect(await document.state.contains(.editingDisabled))
        try await document.close()
        #expect(await document.state.contains(.closed))
        #expect(fixture.documentNames.isEmpty, "the deleted document's file was not written again")
    }

    /// An edit builds on everything the log holds: once the library deleted the document, the next edit sees it.
    @Test func anEditOfADocumentDeletedWhileOpenIsRefused() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: 1, groupingInterval: 0))
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("text"))
        #expect(fixture.documentNames == ["Notes.txt"])
        try await library.delete(document.id)

        let error = try await #require(throws: DocumentError.self) { try await document.edit(.append("!")) }
        #expect(error.code == .deleted)
        #expect(await document.model.text == "text")
        #expect(fixture.documentNames.isEmpty)
        #expect(await document.state == .editingDisabled)
    }

    @Test func refreshPicksUpARenameMadeThroughTheLibrary() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await library.rename(document.id, to: "Journal")
        #expect(await document.displayName == "Notes")
        try await document.refresh()
        #expect(await document.displayName == "Journal")
        #expect(try await document.fileURL == fixture.documentFile("Journal.txt"))
    }
}
