import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Package members above the library's threshold are blobs: referred to by hash, stored once, and a document whose
/// blob has not arrived opens with the member unavailable and fills in when it comes.
@Suite struct AttachmentTests {
    /// `count` bytes no compressor shrinks, different for each `seed`.
    static func image(_ seed: UInt64, count: Int = 64 << 10) -> Data {
        var generator = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    @Test func anImageIsStoredOnceHoweverManyChangesAndDocumentsUseIt() async throws {
        let fixture = try LibraryFixture(seed: 1)
        let library = try fixture.library()
        let cover = Self.image(1)
        let pages = try await library.create(
            PagesDocument.self, named: "Book", contents: try PagesDocument(text: "Book", images: ["cover.png": cover]))
        let changes = try library.store.changes(of: pages.id)
        let baseline = try #require(changes.last)
        #expect(baseline.blobs == [BlobReference(to: cover)])
        if case .baseline(let contents) = baseline.kind { #expect(contents.count < 1_000) }

        // The same image again, in this document and in another: no new blob.
        try await pages.edit(.putImage(name: "back.png", bytes: cover))
        try await pages.commit()
        _ = try await library.create(
            PagesDocument.self, named: "Copy", contents: try PagesDocument(text: "", images: ["a.png": cover]))
        #expect(try library.store.blobUsage().count == 1)

        // A new revision of the image is a blob of its own; a small image stays in its change.
        let revised = Self.image(2)
        try await pages.edit(.putImage(name: "cover.png", bytes: revised))
        try await pages.edit(.putImage(name: "icon.png", bytes: Data("tiny".utf8)))
        try await pages.commit()
        let usage = try library.store.blobUsage()
        #expect(usage.count == 2)
        #expect(usage.bytes < 2 * cover.count + 1_024)

        // Reopened, the document reads its images back from the blobs.
        try await pages.close()
        let reopened = try fixture.library()
        let again = try await reopened.open(pages.id, as: PagesDocument.self)
        let model = await again.model
        #expect(model.images == ["cover.png": revised, "back.png": cover, "icon.png": Data("tiny".utf8)])
        #expect(await again.unavailableMembers.isEmpty)
        try reopened.store.checkInvariants()
    }

    /// A peer's changes arrive without the blob: the document opens with the image unavailable (its placeholder),
    /// text edits go on, the file waits, and the image fills in when the blob is stored.
    @Test func aDocumentWhoseBlobHasNotArrivedOpensAndFillsIn() async throws {
        let iPad = try LibraryFixture(seed: 3)
        let mac = try LibraryFixture(seed: 4)
        let a = try iPad.library()
        let b = try mac.library()
        let cover = Self.image(3)
        // A text longer than the threshold: only the image, a member the model keeps as bytes, is a blob.
        let long = String(repeating: "A line of the book.\n", count: 300)
        let pages = try await a.create(
            PagesDocument.self, named: "Book", in: .shared,
            contents: try PagesDocument(text: long + "Book", images: ["cover.png": cover]))
        try await pages.edit(.insertText(at: long.unicodeScalars.count + 4, text: "!"))
        try await pages.commit()
        try b.store.ingest(trusting: try a.store.changes(of: pages.id))
        #expect(try b.store.missingBlobs() == [BlobReference(to: cover)])
        #expect(try b.store.missingBlobs(of: pages.id) == [BlobReference(to: cover)])

        let onMac = try await b.open(pages.id, as: PagesDocument.self)
        let shown = await onMac.model
        #expect(shown.text == long + "Book!")
        #expect(BlobReference(placeholder: shown.images["cover.png"]!) == BlobReference(to: cover))
        let unavailable = await onMac.unavailableMembers
        #expect(unavailable.map(\.path.description) == ["images/cover.png"])
        #expect(unavailable.map(\.blob) == [BlobReference(to: cover)])

        // Typing goes on; the save waits for the image rather than write its placeholder.
        try await onMac.edit(.insertText(at: 0, text: "My "))
        let report = try await onMac.save()
        #expect(report.isEmpty)
        #expect(try PosixFileSystem().itemKind(at: await onMac.fileURL) == .absent)
        // The edit keeps the image as the same blob: nothing of the placeholder entered the log as content.
        #expect(try b.store.blobUsage().count == 0)

        // A blob no change refers to is refused; the one the document waits for fills it in.
        let intake = try b.store.storeBlobs([Self.image(99, count: 5_000), cover])
        #expect(intake.stored == [BlobReference(to: cover)])
        #expect(intake.refused == [BlobReference(to: Self.image(99, count: 5_000))])
        #expect(intake.documents == [pages.id])
        #expect(try await onMac.refresh())
        let filled = await onMac.model
        #expect(filled.text == "My " + long + "Book!")
        #expect(filled.images["cover.png"] == cover)
        #expect(await onMac.unavailableMembers.isEmpty)
        #expect(try await !onMac.save().isEmpty)
        #expect(try b.store.missingBlobs().isEmpty)
        try b.store.checkInvariants()
    }

    /// `removeOtherVersions` lets go of the image only the discarded version had: the space comes back, the blob is
    /// not asked of peers again nor taken when offered, and the discarded version reads with the image unavailable.
    @Test func removingOtherVersionsLetsTheirBlobsGo() async throws {
        let iPad = try LibraryFixture(seed: 7)
        let mac = try LibraryFixture(seed: 8)
        let a = try iPad.library()
        let b = try mac.library()
        let first = Self.image(7)
        let fromIPad = Self.image(8)
        let fromMac = Self.image(9)
        let onA = try await a.create(
            PagesDocument.self, named: "Book", in: .shared,
            contents: try PagesDocument(text: "Book", images: ["cover.png": first]))
        try exchange(a, b, onA.id)
        let onB = try await b.open(onA.id, as: PagesDocument.self)
        try await onA.edit(.putImage(name: "cover.png", bytes: fromIPad))
        try await onA.commit()
        mac.clock.advance(byMilliseconds: 5_000)
        try await onB.edit(.putImage(name: "cover.png", bytes: fromMac))
        try await onB.commit()
        try exchange(a, b, onA.id)
        try await onA.refresh()
        #expect(await onA.state.contains(.inConflict))
        #expect(try a.store.blobUsage().count == 3)
        let kept = await onA.model.images["cover.png"]

        try await onA.removeOtherVersions()
        #expect(await !onA.state.contains(.inConflict))
        #expect(await onA.model.images["cover.png"] == kept)
        let lost = kept == fromIPad ? fromMac : fromIPad
        let usage = try a.store.blobUsage()
        #expect(usage.count == 2)
        #expect(try a.store.blobs([BlobReference(to: lost)]).isEmpty)
        #expect(try a.store.missingBlobs().isEmpty, "a collected blob is not missing")
        #expect(try a.store.storeBlobs([lost]).refused == [BlobReference(to: lost)])
        #expect(try a.store.hasBlob(BlobReference(to: first)), "the version kept descends from the first image")

        // The discarded version is still in the history, its image unavailable once no cache holds it.
        let lostChange = try #require(
            try a.store.changes(of: onA.id).last { $0.blobs == [BlobReference(to: lost)] })
        try await onA.close()
        let reopened = try await iPad.library().open(onA.id, as: PagesDocument.self)
        #expect(await reopened.model.images["cover.png"] == kept)
        let then = try await reopened.contents(at: lostChange.hash)
        #expect(BlobReference(placeholder: then.images["cover.png"]!) == BlobReference(to: lost))

        // Put back by a new change (here as the discarded version's placeholder, without its bytes), the blob is
        // needed again: missing, asked of peers, taken when offered.
        try await reopened.edit(.putImage(name: "back.png", bytes: then.images["cover.png"]!))
        try await reopened.commit()
        #expect(try a.store.missingBlobs() == [BlobReference(to: lost)])
        #expect(try a.store.storeBlobs([lost]).stored == [BlobReference(to: lost)])
        #expect(try await reopened.refresh())
        #expect(await reopened.model.images["back.png"] == lost)
        try a.store.checkInvariants()
    }

    /// A reference with a stored blob's hash but another size (which no honest change makes) reads as unavailable:
    /// nothing fails, and the honest reference still reads the blob.
    @Test func aReferenceWithAnotherSizeReadsAsUnavailable() async throws {
        let fixture = try LibraryFixture(seed: 11)
        let library = try fixture.library()
        let cover = Self.image(11)
        let pages = try await library.create(
            PagesDocument.self, named: "Book", contents: try PagesDocument(text: "", images: ["cover.png": cover]))
        let forged = BlobReference(hash: BlobReference(to: cover).hash, size: 10)
        var writer = BinaryWriter()
        PagesDocument.Operation.encodeGroup([.putImage(name: "forged.png", bytes: forged.placeholder)], into: &writer)
        try library.store.append([.edit(Edit(operations: Data(writer.bytes)))], to: pages.id, blobs: [[forged]])
        #expect(try library.store.blobs([forged]).isEmpty)
        #expect(try library.store.blobs([BlobReference(to: cover)]).count == 1)
        #expect(try await pages.refresh())
        let model = await pages.model
        #expect(model.images["cover.png"] == cover)
        #expect(BlobReference(placeholder: model.images["forged.png"]!) == forged)
    }

    /// A library without a threshold writes every byte into its changes, as before blobs.
    @Test func withoutAThresholdChangesCarryTheirBytes() async throws {
        let fixture = try LibraryFixture(seed: 5)
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, clock: fixture.clock, identifiers: fixture.identifiers,
            backgroundWork: false, blobThreshold: nil)
        let cover = Self.image(5)
        let pages = try await library.create(
            PagesDocument.self, named: "Book", contents: try PagesDocument(text: "", images: ["cover.png": cover]))
        #expect(try library.store.changes(of: pages.id).allSatisfy(\.blobs.isEmpty))
        #expect(try library.store.blobUsage().count == 0)
    }
}

extension AttachmentTests {
    /// Bytes from outside that happen to be a placeholder naming a blob beyond the bounds are refused: as an edit
    /// (`invalidOperation`, nothing applied) and as decoded bytes in their inline form (not canonical).
    @Test func anOversizedPlaceholderFromOutsideIsRefused() async throws {
        let fixture = try LibraryFixture(seed: 13)
        let library = try fixture.library()
        let pages = try await library.create(PagesDocument.self, named: "Book")
        let huge = BlobReference(hash: BlobReference(to: Data("x".utf8)).hash, size: 1 << 30)
        await #expect(throws: DocumentError.self) {
            try await pages.edit(.putImage(name: "big.png", bytes: huge.placeholder))
        }
        #expect(await pages.model.images.isEmpty)
        #expect(try await !pages.hasUnsavedChanges)

        // Written inline (tag 1), a placeholder is another form of a reference: refused.
        var writer = BinaryWriter()
        writer.write(varint: 1)
        writer.write(byte: 1)
        writer.write(string: "a.png")
        writer.write(lengthPrefixed: huge.placeholder)
        #expect(throws: CodecError.self) { try PagesDocument.Operation.decodeGroup(Data(writer.bytes)) }
    }
}

extension AttachmentTests {
    /// Contents that refer to a blob for a member the model reads itself (a pages text, written so by a peer) are
    /// refused on every device alike, whether or not the blob is there: the baseline reads as carrying none.
    @Test func contentsReferringToABlobForAParsedMemberAreRefused() async throws {
        let fixture = try LibraryFixture(seed: 14)
        let library = try fixture.library()
        let pages = try await library.create(
            PagesDocument.self, named: "Book", contents: try PagesDocument(text: "kept"))
        let text = String(repeating: "a forged text, written as a blob\n", count: 200)
        var writer = BinaryWriter()
        writer.blobThreshold = 64
        writer.blobMembers = { _ in true }
        try PagesDocument(text: text).contents().encode(into: &writer)
        let textBlob = try #require(writer.blobBytes.first)
        try library.store.append(
            [.baseline(contents: Data(writer.bytes))], to: pages.id, blobs: [writer.blobReferences],
            blobBytes: writer.blobBytes)
        #expect(try library.store.hasBlob(textBlob.key), "the blob is here, and still the contents are refused")
        #expect(try await pages.refresh())
        #expect(await pages.model.text == "kept")
    }
}
