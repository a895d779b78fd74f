import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// A library hands out one `Document` per open document, and an edit always builds on everything the local log
/// holds: no edit of this device is ever hidden by another of its own, and no resolution is recorded that the app
/// did not ask for.
@Suite struct OpenDocumentSharingTests {
    /// Every resolution in the document's log.
    func resolutions(of id: DocumentID, in library: DocumentLibrary) throws -> [Resolution] {
        try library.store.changes(of: id).compactMap { change in
            if case .resolution(let resolution) = change.kind { return resolution }
            return nil
        }
    }

    @Test func openingAnOpenDocumentGivesTheSameDocument() async throws {
        let fixture = try LibraryFixture(seed: 11)
        let library = try fixture.library()
        let created = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "baseline\n"))
        let first = try await library.open(created.id, as: TextDocument.self)
        let second = try await library.open(named: "Notes", as: TextDocument.self)
        #expect(first === created)
        #expect(second === created)

        try await first.edit(.append("one\n"))
        try await second.edit(.append("two\n"))
        try await first.save()
        try await second.save()
        try await first.close()
        try await second.close()

        #expect(try fixture.text(at: fixture.documentFile("Notes.txt")) == "baseline\none\ntwo\n")
        let reopened = try await library.open(created.id, as: TextDocument.self)
        #expect(reopened !== created, "a closed document is opened afresh")
        #expect(await reopened.model.text == "baseline\none\ntwo\n")
        #expect(try resolutions(of: created.id, in: library).isEmpty)
        #expect(try await reopened.lossLedger().isEmpty)
        try library.store.checkInvariants()
    }

    @Test func concurrentOpensOfOneDocumentGiveOneDocument() async throws {
        let fixture = try LibraryFixture(seed: 12)
        let library = try fixture.library()
        let id = try await library.create(TextDocument.self, named: "Notes").id
        let opened = try await withThrowingTaskGroup(of: Document<TextDocument>.self) { group in
            for _ in 0..<8 { group.addTask { try await library.open(id, as: TextDocument.self) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(opened.allSatisfy { $0 === opened[0] })
    }

    /// Two libraries on one directory (two processes of one app, say) have a document each: an edit through one
    /// builds on what the other committed, so neither hides the other's edit.
    @Test func anEditBuildsOnWhatAnotherHandleCommitted() async throws {
        let fixture = try LibraryFixture(seed: 13)
        let library = try fixture.library()
        let other = try fixture.library()
        let first = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "baseline\n"))
        let second = try await other.open(first.id, as: TextDocument.self)
        try await first.edit(.append("one\n"))
        try await first.commit()
        try await second.edit(.append("two\n"))
        try await second.commit()
        #expect(await second.model.text == "baseline\none\ntwo\n")
        #expect(try library.store.heads(of: first.id).count == 1, "no fork")
        #expect(try resolutions(of: first.id, in: library).isEmpty)
        try await first.refresh()
        #expect(await first.model.text == "baseline\none\ntwo\n")
    }

    /// An open group committed after another library on the same directory appended for the same device: the store
    /// makes the change on that append too, and the document shows the state the log gives, both edits included.
    @Test func aGroupCommittedOverAnotherHandlesChangeShowsWhatTheLogHolds() async throws {
        let fixture = try LibraryFixture(seed: 14)
        let library = try fixture.library(autosave: .standard)
        let other = try fixture.library()
        let first = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "baseline\n"))
        let second = try await other.open(first.id, as: TextDocument.self)
        try await first.edit(.append("one\n"))
        try await second.edit(.append("two\n"))
        try await first.commit()

        let reread = try await fixture.library().open(first.id, as: TextDocument.self)
        let text = await reread.model.text
        #expect(text.contains("one\n") && text.contains("two\n"))
        #expect(await first.model.text == text)
        try await first.edit(.append("three\n"))
        #expect(await first.model.text == text + "three\n")
        #expect(try resolutions(of: first.id, in: library).isEmpty)
    }
}
