import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// `DocumentLibrary.removeLocalCopy(of:)`: one document leaves the device (what an app does with a document whose
/// share ended), everything else of the library stays, and a sync that is granted it again brings back what the peer
/// holds of it.
@Suite struct LocalCopyRemovalTests {
    @Test func aRemovedDocumentLeavesNothingAndTheOthersStay() async throws {
        let fixture = try LibraryFixture(seed: 42)
        let library = try fixture.library()
        let shared = AttachmentTests.image(1)
        let own = AttachmentTests.image(2)
        let kept = AttachmentTests.image(3)
        let book = try await library.create(
            PagesDocument.self, named: "Book", in: .shared,
            contents: try PagesDocument(text: "Book", images: ["cover.png": shared, "map.png": own]))
        for index in 0..<40 {
            try await book.edit(.insertText(at: 4 + index, text: "!"))
            try await book.commit()
        }
        try await book.save()
        let notes = try await library.create(
            PagesDocument.self, named: "Notes", in: .shared,
            contents: try PagesDocument(text: "Notes", images: ["cover.png": shared, "photo.png": kept]))
        try await notes.save()
        // A checkpoint of each, and the book's older changes folded into a segment: every table holds some of it.
        for document in [book.id, notes.id] {
            let model = await (document == book.id ? book.model : notes.model)
            try library.store.checkpoints.save(
                of: document, at: try library.store.vector(of: document), contents: model.contents().encoded())
        }
        #expect(try library.store.fold(book.id, keepingNewest: 4) > 0)
        try library.store.localState.set([LocalStateKey("note"): Data("x".utf8)], of: book.id)
        try library.store.syncCursors.set(
            try library.store.vector(of: book.id), SyncCursorKey(peer: "server"), of: book.id)
        let bookFile = try await library.fileURL(for: try #require(try await library.info(of: book.id)))
        let notesFile = try await library.fileURL(for: try #require(try await library.info(of: notes.id)))
        #expect(FileManager.default.fileExists(atPath: bookFile.path))
        let history = try library.store.changes(of: book.id)
        let heads = try library.store.heads(of: book.id).map(\.hash)
        let notesHistory = try library.store.changes(of: notes.id)
        let blobsBefore = try library.store.blobUsage().count

        // Open, it is refused, and nothing is removed.
        let refused = await #expect(throws: DocumentError.self) { try await library.removeLocalCopy(of: book.id) }
        #expect(refused?.code == .open)
        #expect(try library.store.changes(of: book.id).count == history.count)
        try await book.close()
        try await notes.close()

        let removal = try await library.removeLocalCopy(of: book.id)
        #expect(removal.changes == history.count)
        #expect(removal.waiting == 0)
        // The map image and the book's checkpoint went; the cover, which the notes use too, stayed.
        #expect(removal.blobs >= 2)
        #expect(try library.store.blobUsage().count == blobsBefore - removal.blobs)
        #expect(try library.store.hasBlob(BlobReference(to: shared)))
        #expect(try library.store.hasBlob(BlobReference(to: kept)))
        #expect(try !library.store.hasBlob(BlobReference(to: own)))

        // Nothing of the book is left; the notes are as they were.
        #expect(!FileManager.default.fileExists(atPath: bookFile.path))
        #expect(FileManager.default.fileExists(atPath: notesFile.path))
        #expect(try library.store.changes(of: book.id).isEmpty)
        #expect(try library.store.heads(of: book.id).isEmpty)
        #expect(try library.store.checkpoints.latest(of: book.id) == nil)
        #expect(try library.store.localState.value(LocalStateKey("note"), of: book.id) == nil)
        #expect(try library.store.syncCursors.vector(SyncCursorKey(peer: "server"), of: book.id).isEmpty)
        #expect(try library.store.documents() == [notes.id])
        #expect(try await library.documents().map(\.id) == [notes.id])
        #expect(try library.store.changes(of: notes.id) == notesHistory)
        let reopenedNotes = try await library.open(notes.id, as: PagesDocument.self)
        #expect(await reopenedNotes.model.images == ["cover.png": shared, "photo.png": kept])
        try await reopenedNotes.close()
        try library.store.checkInvariants()
        let unopened = await #expect(throws: DocumentError.self) {
            try await library.open(book.id, as: PagesDocument.self)
        }
        #expect(unopened?.code == .notFound)
        let again = await #expect(throws: DocumentError.self) { try await library.removeLocalCopy(of: book.id) }
        #expect(again?.code == .notFound)

        // A restarted process sees the same.
        let restarted = try fixture.library()
        #expect(try await restarted.documents().map(\.id) == [notes.id])

        // Granted again, the book comes back whole: every change, its heads, and its image asked for again.
        try restarted.store.ingest(trusting: history)
        #expect(try restarted.store.heads(of: book.id).map(\.hash) == heads)
        #expect(try restarted.store.missingBlobs(of: book.id) == [BlobReference(to: own)])
        try restarted.store.storeBlobs([own])
        let back = try await restarted.open(book.id, as: PagesDocument.self)
        #expect(await back.model.text == "Book" + String(repeating: "!", count: 40))
        #expect(await back.model.images == ["cover.png": shared, "map.png": own])
        try restarted.store.checkInvariants()
    }

    /// A removal cut short after the file went (the process died before the store's transaction) leaves the history
    /// whole, and the document listed without its file; removing it again finishes the removal.
    @Test func aRemovalCutShortFinishesWhenCalledAgain() async throws {
        let fixture = try LibraryFixture(seed: 43)
        let library = try fixture.library()
        let notes = try await library.create(
            PagesDocument.self, named: "Notes", in: .shared, contents: try PagesDocument(text: "Notes"))
        try await notes.save()
        let file = try await library.fileURL(for: try #require(try await library.info(of: notes.id)))
        try await notes.close()
        let history = try library.store.changes(of: notes.id)

        // What the first step leaves: the file gone, the store untouched.
        try FileManager.default.removeItem(at: file)
        let restarted = try fixture.library()
        #expect(try restarted.store.changes(of: notes.id) == history)
        #expect(try await restarted.documents().map(\.id) == [notes.id])

        let removal = try await restarted.removeLocalCopy(of: notes.id)
        #expect(removal.changes == history.count)
        #expect(try await restarted.documents().isEmpty)
        #expect(try restarted.store.changes(of: notes.id).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try restarted.store.checkInvariants()
    }
}
