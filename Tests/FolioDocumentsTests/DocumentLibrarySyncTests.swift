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
    /// Two libraries sharing a folder, and "Notes" (in the shared container, with `contents`) created on the first
    /// and synced to the second, open on both.
    struct SharedNotes {
        let folder: TemporaryDirectory
        /// The libraries' directories, kept as long as the libraries.
        let fixtures: (iPad: LibraryFixture, mac: LibraryFixture)
        let iPad: DocumentLibrary
        let mac: DocumentLibrary
        let transport: FolderTransport
        let onIPad: Document<TextDocument>
        let onMac: Document<TextDocument>

        init(seeds: UInt64, iPadAutosave: AutosavePolicy = .manual, contents: TextDocument? = nil) async throws {
            folder = try TemporaryDirectory()
            fixtures = (try LibraryFixture(seed: seeds), try LibraryFixture(seed: seeds + 1))
            iPad = try fixtures.iPad.library(autosave: iPadAutosave)
            mac = try fixtures.mac.library()
            transport = FolderTransport(root: folder.url)
            onIPad = try await iPad.create(TextDocument.self, named: "Notes", in: .shared, contents: contents)
            try await iPad.sync(through: transport)
            try await mac.sync(through: transport)
            onMac = try await mac.open(named: "Notes", as: TextDocument.self)
        }

        /// The iPad syncs, then the Mac.
        func sync() async throws {
            try await iPad.sync(through: transport)
            try await mac.sync(through: transport)
        }
    }

    /// A sync that brings changes brings the open documents up to date at once, and announces it: no `refresh()`.
    @Test func aSyncBringsOpenDocumentsUpToDate() async throws {
        let notes = try await SharedNotes(seeds: 5, contents: TextDocument(text: "hello\n"))
        var versions = notes.onMac.versionChanges.makeAsyncIterator()

        try await notes.onIPad.edit(.append("from the iPad\n"))
        try await notes.sync()
        #expect(await notes.onMac.model.text == "hello\nfrom the iPad\n")
        let arrived = try #require(try notes.mac.store.heads(of: notes.onIPad.id).first)

        // An edit made now builds on what arrived: no fork.
        try await notes.onMac.edit(.append("from the Mac\n"))
        #expect(try notes.mac.store.heads(of: notes.onIPad.id).count == 1)
        #expect(await notes.onMac.model.text == "hello\nfrom the iPad\nfrom the Mac\n")
        // Closing ends the stream: what it holds is what was announced.
        try await notes.onMac.close()
        #expect(await versions.next()?.hash == arrived.hash)
    }

    /// An edit still in its open group (grouped with the next keystrokes) goes out with the next sync.
    @Test func aSyncSendsEditsStillInTheirGroup() async throws {
        let notes = try await SharedNotes(seeds: 9, iPadAutosave: .standard)
        try await notes.onIPad.edit(.append("typed just now"))
        try await notes.sync()
        #expect(await notes.onMac.model.text == "typed just now")
    }

    /// A conflict that a sync brings shows in the document's state at once, announced on `stateChanges`.
    @Test func aSyncAnnouncesTheConflictItBrings() async throws {
        let notes = try await SharedNotes(seeds: 7, contents: TextDocument(text: "hello\n"))
        var states = notes.onMac.stateChanges.makeAsyncIterator()

        try await notes.onIPad.edit(.append("from the iPad\n"))
        try await notes.onMac.edit(.append("from the Mac\n"))
        try await notes.sync()
        #expect(await notes.onMac.state.contains(.inConflict))
        #expect(try await notes.onMac.versionCount() == 2)
        // Closing ends the stream: what it holds is what was announced.
        try await notes.onMac.close()
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
        #expect(try await b.documents().map(\.displayName) == ["Notes"])
        #expect(try await b.fileURL(for: try #require(try await b.info(of: notes.id))).lastPathComponent == "Notes.txt")

        try await a.rename(notes.id, to: "Ideas")
        try b.store.ingest(trusting: try a.store.changes(of: notes.id, since: b.store.vector(of: notes.id)))
        #expect(try await b.documents().map(\.displayName) == ["Ideas"])
        try await a.delete(notes.id)
        try b.store.ingest(trusting: try a.store.changes(of: notes.id, since: b.store.vector(of: notes.id)))
        #expect(try await b.documents().isEmpty)
        #expect(try await b.documents(includingDeleted: true).map(\.isDeleted) == [true])
        #expect(
            try await b.documents(includingDeleted: true)
                == b.store.documents().compactMap { try b.catalogInfo(of: $0) })
    }
}
