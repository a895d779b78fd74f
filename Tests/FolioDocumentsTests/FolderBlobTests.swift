import Folio
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// Blobs through a shared folder: one file per blob, written once, read by the devices that lack it.
@Suite struct FolderBlobTests {
    @Test func aBlobIsWrittenOnceAndReadByTheDeviceThatLacksIt() async throws {
        let iPad = try LibraryFixture(seed: 21)
        let mac = try LibraryFixture(seed: 22)
        let folder = try TemporaryDirectory()
        let transport = FolderTransport(root: folder.url)
        let a = try iPad.library()
        let b = try mac.library()
        let cover = AttachmentTests.image(21)
        let book = try await a.create(
            PagesDocument.self, named: "Book", in: .shared,
            contents: try PagesDocument(text: "Book", images: ["cover.png": cover]))
        let sent = try await a.sync(through: transport)
        #expect(sent.blobsSent == 1)
        let file = folder.url.appendingPathComponent("blobs/" + BlobReference(to: cover).hash.hex)
        #expect(try Data(contentsOf: file) == cover)

        let received = try await b.sync(through: transport)
        #expect(received.blobsReceived == 1)
        let onMac = try await b.open(book.id, as: PagesDocument.self)
        #expect(await onMac.model.images["cover.png"] == cover)
        // Nothing new to write: the Mac does not write the blob again.
        #expect(try await b.sync(through: transport).blobsSent == 0)
        #expect(try await a.sync(through: transport).blobsSent == 0)
    }

    /// A file under a blob's name that is not that blob is refused and reported; the device that has the blob
    /// replaces it at its next write of a change that refers to it.
    @Test func aDamagedBlobFileIsRefusedAndReplaced() async throws {
        let iPad = try LibraryFixture(seed: 23)
        let mac = try LibraryFixture(seed: 24)
        let folder = try TemporaryDirectory()
        let transport = FolderTransport(root: folder.url)
        let a = try iPad.library()
        let b = try mac.library()
        let cover = AttachmentTests.image(23)
        let blobs = folder.url.appendingPathComponent("blobs")
        try FileManager.default.createDirectory(at: blobs, withIntermediateDirectories: true)
        let file = blobs.appendingPathComponent(BlobReference(to: cover).hash.hex)
        try Data("not the image".utf8).write(to: file)

        let book = try await a.create(
            PagesDocument.self, named: "Book", in: .shared,
            contents: try PagesDocument(text: "Book", images: ["cover.png": cover]))
        #expect(try await a.sync(through: transport).blobsSent == 1)
        #expect(try Data(contentsOf: file) == cover)

        try Data("damaged later".utf8).write(to: file)
        let received = try await b.sync(through: transport)
        #expect(received.blobsReceived == 0)
        #expect(received.problems.contains { $0.contains("is not the blob its name says") })
        let onMac = try await b.open(book.id, as: PagesDocument.self)
        #expect(await onMac.unavailableMembers.map(\.path.description) == ["images/cover.png"])

        // The iPad writes the blob again with its next change that refers to it; the Mac fills in.
        let book2 = try await a.create(
            PagesDocument.self, named: "Again", in: .shared,
            contents: try PagesDocument(text: "", images: ["c.png": cover]))
        _ = book2
        #expect(try await a.sync(through: transport).blobsSent == 1)
        #expect(try await b.sync(through: transport).blobsReceived == 1)
        #expect(await onMac.model.images["cover.png"] == cover)
        #expect(await onMac.unavailableMembers.isEmpty)
    }
}
