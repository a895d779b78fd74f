import Folio
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// Libraries sync through a shared folder, and open documents pick up what arrived.
@Suite struct DocumentLibrarySyncTests {
    @Test func twoLibrariesSyncThroughAFolderAndSeeEachOthersEdits() async throws {
        let iPad = try LibraryFixture(seed: 1)
        let mac = try LibraryFixture(seed: 2)
        let folder = try TemporaryDirectory()
        let a = try iPad.library()
        let b = try mac.library()
        let transport = FolderTransport(root: folder.url)
        let notes = try await a.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "hello\n"))
        try await a.sync(through: transport)
        let report = try await b.sync(through: transport)
        #expect(report.changesReceived >= 2)
        let onMac = try await b.open(named: "Notes", as: TextDocument.self)
        #expect(await onMac.model.text == "hello\n")
        try await onMac.edit(.append("from the Mac\n"))
        try await b.sync(through: transport)
        try await a.sync(through: transport)
        #expect(await notes.model.text == "hello\nfrom the Mac\n", "the sync brought the open document up to date")
        #expect(try await !notes.refresh(), "nothing is left to pick up")
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }
}

extension DocumentLibrarySyncTests {
    /// A sync that brings changes brings the open documents up to date at once, and announces it: no `refresh()`.
    @Test func aSyncBringsOpenDocumentsUpToDate() async throws {
        let iPad = try LibraryFixture(seed: 5)
        let mac = try LibraryFixture(seed: 6)
        let folder = try TemporaryDirectory()
        let a = try iPad.library()
        let b = try mac.library()
        let transport = FolderTransport(root: folder.url)
        let onIPad = try await a.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "hello\n"))
        try await a.sync(through: transport)
        try await b.sync(through: transport)
        let onMac = try await b.open(named: "Notes", as: TextDocument.self)
        var versions = onMac.versionChanges.makeAsyncIterator()

        try await onIPad.edit(.append("from the iPad\n"))
        try await onIPad.commit()
        try await a.sync(through: transport)
        try await b.sync(through: transport)
        #expect(await onMac.model.text == "hello\nfrom the iPad\n")
        let arrived = try #require(try b.store.heads(of: onIPad.id).first)

        // An edit made now builds on what arrived: no fork.
        try await onMac.edit(.append("from the Mac\n"))
        try await onMac.commit()
        #expect(try b.store.heads(of: onIPad.id).count == 1)
        #expect(await onMac.model.text == "hello\nfrom the iPad\nfrom the Mac\n")
        // Closing ends the stream: what it holds is what was announced.
        try await onMac.close()
        #expect(await versions.next()?.hash == arrived.hash)
    }

    /// An edit still in its open group (grouped with the next keystrokes) goes out with the next sync.
    @Test func aSyncSendsEditsStillInTheirGroup() async throws {
        let iPad = try LibraryFixture(seed: 9)
        let mac = try LibraryFixture(seed: 10)
        let folder = try TemporaryDirectory()
        let a = try iPad.library(autosave: .standard)
        let b = try mac.library()
        let transport = FolderTransport(root: folder.url)
        let onIPad = try await a.create(TextDocument.self, named: "Notes", in: .shared)
        try await onIPad.edit(.append("typed just now"))
        try await a.sync(through: transport)
        try await b.sync(through: transport)
        let onMac = try await b.open(named: "Notes", as: TextDocument.self)
        #expect(await onMac.model.text == "typed just now")
    }

    /// A conflict that a sync brings shows in the document's state at once, announced on `stateChanges`.
    @Test func aSyncAnnouncesTheConflictItBrings() async throws {
        let iPad = try LibraryFixture(seed: 7)
        let mac = try LibraryFixture(seed: 8)
        let folder = try TemporaryDirectory()
        let a = try iPad.library()
        let b = try mac.library()
        let transport = FolderTransport(root: folder.url)
        let onIPad = try await a.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "hello\n"))
        try await a.sync(through: transport)
        try await b.sync(through: transport)
        let onMac = try await b.open(named: "Notes", as: TextDocument.self)
        var states = onMac.stateChanges.makeAsyncIterator()

        try await onIPad.edit(.append("from the iPad\n"))
        try await onIPad.commit()
        try await onMac.edit(.append("from the Mac\n"))
        try await onMac.commit()
        try await a.sync(through: transport)
        try await b.sync(through: transport)
        #expect(await onMac.state.contains(.inConflict))
        #expect(try await onMac.versionCount() == 2)
        // Closing ends the stream: what it holds is what was announced.
        try await onMac.close()
        #expect(await states.next() == [.inConflict])
    }

    /// Listing remembers each document's info by its heads, so a change that reaches the store by any road (here
    /// straight into the store, behind the library's back) shows at the next listing, and one that does not leaves
    /// the list as it was.
    @Test func theListingFollowsChangesThatArriveBehindTheLibrary() async throws {
        let iPad = try LibraryFixture(seed: 3)
        let mac = try LibraryFixture(seed: 4)
        let a = try iPad.library()
        let b = try mac.library()
        let notes = try await a.create(TextDocument.self, named: "Notes", in: .shared)
        try b.store.ingest(trusting: try a.store.changes(of: notes.id))
        #expect(try b.documents().map(\.displayName) == ["Notes"])
        #expect(try b.fileURL(for: try #require(try b.info(of: notes.id))).lastPathComponent == "Notes.txt")

        try a.rename(notes.id, to: "Ideas")
        try b.store.ingest(trusting: try a.store.changes(of: notes.id, since: b.store.vector(of: notes.id)))
        #expect(try b.documents().map(\.displayName) == ["Ideas"])
        try a.delete(notes.id)
        try b.store.ingest(trusting: try a.store.changes(of: notes.id, since: b.store.vector(of: notes.id)))
        #expect(try b.documents().isEmpty)
        #expect(try b.documents(includingDeleted: true).map(\.isDeleted) == [true])
        #expect(try b.documents(includingDeleted: true) == b.store.documents().compactMap { try b.info(of: $0) })
    }
}
