import Folio
import FolioClient
import FolioStore
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// Blobs through a real `folio serve`: each crosses to the server once, from it only to the devices that lack it.
@Suite struct BlobSyncTests {
    static func image(_ seed: UInt64, count: Int = 64 << 10) -> Data {
        var generator = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    @Test func imagesCrossTheServerOnceEachWay() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "pages")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let url = fixture.server.libraryURL("pages")
        let phoneSync = try await phone.startSyncing(with: url, token: token)
        let laptopSync = try await laptop.startSyncing(with: url, token: token)
        let cover = Self.image(1)
        let map = Self.image(2)
        let book = try await phone.create(
            PagesDocument.self, named: "Trip", in: .shared,
            contents: try PagesDocument(text: "Day 1", images: ["cover.png": cover, "map.png": map]))
        try await eventually("the book on the laptop") { try await laptop.info(of: book.id) != nil }
        let onLaptop = try await laptop.open(book.id, as: PagesDocument.self)
        try await eventually("the images on the laptop") {
            await onLaptop.model.images == ["cover.png": cover, "map.png": map]
        }
        #expect(await onLaptop.unavailableMembers.isEmpty)
        #expect(try await fixture.metric("folio_blobs_in_total") == 2)
        #expect(try await fixture.metric("folio_blobs_out_total") == 2)

        // A new revision of one image: one more blob each way; the same image in a second document: none.
        let revised = Self.image(3)
        try await book.edit(.putImage(name: "cover.png", bytes: revised))
        try await book.commit()
        try await eventually("the revised cover on the laptop") { await onLaptop.model.images["cover.png"] == revised }
        let copy = try await phone.create(
            PagesDocument.self, named: "Copy", in: .shared,
            contents: try PagesDocument(text: "", images: ["map.png": map]))
        try await eventually("the copy on the laptop") { try laptop.store.vector(of: copy.id).changeCount >= 2 }
        try await eventually("the copy's changes stored") {
            try await fixture.metric("folio_changes_in_total") ?? 0 >= 5
        }
        #expect(try await fixture.metric("folio_blobs_in_total") == 3)
        #expect(try await fixture.metric("folio_blobs_out_total") == 3)
        #expect(try laptop.store.blobUsage().count == 3)
        #expect(try laptop.store.missingBlobs().isEmpty)
        await phoneSync.stop()
        await laptopSync.stop()

        // A device that joins later gets each blob once, with the changes that refer to them.
        let tablet = try fixture.library("Tablet")
        let tabletSync = try await tablet.startSyncing(with: url, token: token)
        try await eventually("every blob on the tablet") {
            try tablet.store.vector(of: copy.id).changeCount >= 2 && tablet.store.blobUsage().count == 3
                && tablet.store.missingBlobs().isEmpty
        }
        let onTablet = try await tablet.open(book.id, as: PagesDocument.self)
        #expect(await onTablet.model.images == ["cover.png": revised, "map.png": map])
        #expect(try await fixture.metric("folio_blobs_out_total") == 6)
        await tabletSync.stop()
    }

    /// A one-shot sync (`DocumentLibrary.sync(through:)`) leaves its blobs on the server: the server asks for them once
    /// it stored the changes that refer to them, and the sync ends only once they are answered and read.
    @Test func aOneShotSyncLeavesItsBlobsOnTheServer() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "pages")
        let phone = try fixture.library("Phone")
        let laptop = try fixture.library("Laptop")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("pages"), token: token)
        let cover = Self.image(4)
        let book = try await phone.create(
            PagesDocument.self, named: "Trip", in: .shared,
            contents: try PagesDocument(text: "Day 1", images: ["cover.png": cover]))
        try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        // What the phone's sync stored is on the server when the sync returns: changes and blob.
        #expect(try await fixture.metric("folio_blobs_in_total") == 1)
        try await laptop.sync(through: WebSocketTransport(endpoint: endpoint))
        let onLaptop = try await laptop.open(book.id, as: PagesDocument.self)
        #expect(await onLaptop.unavailableMembers.isEmpty)
        #expect(await onLaptop.model.images == ["cover.png": cover])
    }

    /// Blobs whose answer takes several `blobs` messages (at most 12 MiB each): the sync returns once all of them
    /// are stored.
    @Test func aOneShotSyncWhoseBlobsTakeSeveralMessagesLeavesThemAll() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "pages")
        let phone = try fixture.library("Phone")
        let endpoint = try ServerEndpoint(url: fixture.server.libraryURL("pages"), token: token)
        let images = ["a.png": Self.image(5, count: 7 << 20), "b.png": Self.image(6, count: 7 << 20)]
        _ = try await phone.create(
            PagesDocument.self, named: "Scans", in: .shared, contents: try PagesDocument(text: "", images: images))
        try await phone.sync(through: WebSocketTransport(endpoint: endpoint))
        #expect(try await fixture.metric("folio_blobs_in_total") == 2)
    }
}
