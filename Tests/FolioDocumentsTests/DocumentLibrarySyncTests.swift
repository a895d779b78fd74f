import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
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
        let notes = try await a.create(TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "hello\n"))
        try await a.sync(through: transport)
        let report = try await b.sync(through: transport)
        #expect(report.changesReceived >= 2)
        let onMac = try await b.open(named: "Notes", as: TextDocument.self)
        #expect(await onMac.model.text == "hello\n")
        try await onMac.edit(.append("from the Mac\n"))
        try await b.sync(through: transport)
        try await a.sync(through: transport)
        #expect(try await notes.refresh())
        #expect(await notes.model.text == "hello\nfrom the Mac\n")
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }
}
