import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Checkpoints: taken after many commits and on close, and used by open, which replays only the tail after them.
@Suite struct DocumentCheckpointTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    @Test func aCheckpointIsTakenAfterAThousandChanges() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        // The creation is the first change since no checkpoint; 998 edits make 999.
        for index in 0..<998 { try await document.edit(.append(String(index % 10))) }
        #expect(try library.store.checkpoints.latest(of: document.id) == nil)

        try await document.edit(.append("!"))
        let checkpoint = try #require(try library.store.checkpoints.latest(of: document.id))
        #expect(checkpoint.vector.changeCount == 1_000)
        #expect(checkpoint.vector == (await document.currentHead.vector))
        #expect(try DocumentContents(decoding: checkpoint.contents) == (await document.model.contents()))

        // The next thousand start counting from there.
        try await document.edit(.append("?"))
        #expect(try library.store.checkpoints.latest(of: document.id)?.vector.changeCount == 1_000)

        let expected = await document.model
        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model == expected)
        #expect(await reopened.model.scalarCount == 1_000)
    }

    @Test func closeTakesACheckpointOfEverythingCommitted() async throws {
        let policy = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 1_000)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(RecordsDocument.self, named: "People")
        try await document.edit(.add(record: "r1", fields: ["name": "Ann"]))
        try await document.edit(.set(record: "r1", field: "name", value: "Anne"))
        try await document.close()

        let checkpoint = try #require(try library.store.checkpoints.latest(of: document.id))
        #expect(checkpoint.vector == (try library.store.vector(of: document.id)), "the open group was committed first")
        let stored = try RecordsDocument(contents: try DocumentContents(decoding: checkpoint.contents))
        #expect(stored == (await document.model))
        #expect(stored["r1"]?.fields == ["name": "Anne"])

        // Closing again, or closing a document opened and left unchanged, takes no new checkpoint.
        fixture.clock.advance(byMilliseconds: 10_000)
        try await document.close()
        try await library.open(document.id, as: RecordsDocument.self).close()
        #expect(try library.store.checkpoints.latest(of: document.id)?.createdAt == checkpoint.createdAt)
    }

    @Test func openRebuildsFromTheLatestCheckpointPlusTheTail() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("logged"))
        try await document.close()
        // A checkpoint whose contents differ from the replay of the log shows which one open used.
        let vector = try library.store.vector(of: document.id)
        try library.store.checkpoints.save(
            of: document.id, at: vector, contents: DocumentContents.data(Data("CHECKPOINT".utf8)).encoded())
        try library.store.append(
            .edit(Edit(operations: TextDocument.Operation.encodeGroup([.append(" + tail")]))), to: document.id)

        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "CHECKPOINT + tail")
    }

    @Test func aDocumentLeftOpenReopensFromCheckpointAndTail() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("before the checkpoint"))
        try await document.close()
        let second = try await library.open(document.id, as: TextDocument.self)
        try await second.edit(.append(", after it"))
        try await second.undo()
        try await second.redo()
        // The process ends without closing: no checkpoint covers the tail.
        #expect(try library.store.checkpoints.latest(of: document.id)?.vector.changeCount == 2)

        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "before the checkpoint, after it")
        try await reopened.undo()
        #expect(await reopened.model.text == "before the checkpoint")
    }

    @Test func aPackageDocumentReopensFromItsCheckpoint() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(PagesDocument.self, named: "Album")
        try await document.edit(.setText("text"))
        try await document.edit(.putImage(name: "a.png", bytes: Data(repeating: 9, count: 256)))
        try await document.close()
        #expect(try library.store.checkpoints.latest(of: document.id) != nil)
        let reopened = try await fixture.library().open(document.id, as: PagesDocument.self)
        #expect(await reopened.model == (await document.model))
    }
}
