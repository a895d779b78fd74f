import FolioCore
import FolioModels
import FolioTestWorkPool
import Foundation
import Testing

/// Images and package files written as blob references: the bytes leave the encoding, a lookup brings them back,
/// and a blob the lookup lacks reads as a placeholder that encodes as the same reference again.
@Suite(.workPool) struct BlobReferenceEncodingTests {
    let image = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
    let small = Data("icon".utf8)

    private func writer(threshold: Int? = 4_096) -> BinaryWriter {
        var writer = BinaryWriter()
        writer.blobThreshold = threshold
        writer.blobMembers = { PagesDocument.isBlobMember($0) }
        return writer
    }

    @Test func aLargeImageIsWrittenAsAReferenceAndReadBackFromTheLookup() throws {
        let operations: [PagesDocument.Operation] = [
            .putImage(name: "cover.png", bytes: image), .putImage(name: "icon.png", bytes: small),
            .insertText(at: 0, text: "Hi"),
        ]
        var writer = writer()
        PagesDocument.Operation.encodeGroup(operations, into: &writer)
        let reference = BlobReference(to: image)
        #expect(writer.blobReferences == [reference])
        #expect(writer.blobBytes == [reference: image])
        #expect(writer.bytes.count < 200)

        let lookup = BlobLookup([image])
        let decoded = try PagesDocument.Operation.decodeGroup(Data(writer.bytes), blobs: lookup)
        #expect(decoded == operations)
        #expect(lookup.missing.isEmpty)

        // Without the writer's threshold, the same operations are written whole, as before.
        #expect(PagesDocument.Operation.encodeGroup(operations).count > image.count)
    }

    @Test func aMissingBlobReadsAsAPlaceholderThatIsWrittenAsTheReferenceAgain() throws {
        var writer = writer()
        PagesDocument.Operation.encodeGroup([.putImage(name: "cover.png", bytes: image)], into: &writer)
        let lookup = BlobLookup()
        let decoded = try PagesDocument.Operation.decodeGroup(Data(writer.bytes), blobs: lookup)
        let reference = BlobReference(to: image)
        #expect(lookup.missing == [reference])
        guard case .putImage(_, let bytes) = decoded.first else {
            Issue.record("not a putImage: \(decoded)")
            return
        }
        #expect(BlobReference(placeholder: bytes) == reference)
        #expect(bytes.count == 56)

        // Written again, even by a writer without a threshold, it is the reference, with no bytes of its own.
        var again = self.writer(threshold: nil)
        PagesDocument.Operation.encodeGroup(decoded, into: &again)
        #expect(again.bytes == writer.bytes)
        #expect(again.blobReferences == [reference])
        #expect(again.blobBytes.isEmpty)
    }

    @Test func aPackageKeepsItsSmallFilesAndRefersToItsLargeOnes() throws {
        // The text is as long as the image, but the model parses it: only the image is a blob.
        let document = try PagesDocument(
            text: String(repeating: "x", count: 10_000), images: ["cover.png": image, "icon.png": small])
        let contents = document.contents()
        var writer = writer()
        contents.encode(into: &writer)
        #expect(writer.blobReferences == [BlobReference(to: image)])
        #expect(writer.bytes.first == 2)
        #expect(writer.bytes.count < 10_400)

        let decoded = try DocumentContents(decoding: Data(writer.bytes), blobs: BlobLookup([image]))
        #expect(decoded == contents)
        #expect(try PagesDocument(contents: decoded) == document)

        // Without the model's word on its members, nothing is a blob: the package's form is the one it always had.
        var plain = BinaryWriter()
        plain.blobThreshold = 4_096
        contents.encode(into: &plain)
        #expect(plain.bytes.first == 1 && plain.blobReferences.isEmpty)
        #expect(contents.encoded().first == 1)
        #expect(try DocumentContents(decoding: contents.encoded()) == contents)

        // A lookup without the image: the package opens, the image a placeholder.
        let lookup = BlobLookup()
        let partial = try PagesDocument(contents: DocumentContents(decoding: Data(writer.bytes), blobs: lookup))
        #expect(BlobReference(placeholder: partial.images["cover.png"]!) == BlobReference(to: image))
        #expect(partial.images["icon.png"] == small)
        #expect(lookup.missing == [BlobReference(to: image)])
    }

    @Test func aPackageFormWithoutAReferenceOrWithAnUnknownFileFormIsRefused() throws {
        let contents = try PagesDocument(text: "x", images: ["cover.png": image]).contents()
        var writer = writer()
        contents.encode(into: &writer)
        var bytes = writer.bytes
        // The flag of the one referenced file: after its path. Turned into an unknown form.
        let path = Array("images/cover.png".utf8)
        let at = try #require(bytes.firstRange(of: path)).upperBound
        #expect(bytes[at] == 1)
        bytes[at] = 7
        #expect(throws: CodecError.self) { try DocumentContents(decoding: Data(bytes)) }

        var plain = Array(try PagesDocument(text: "x").contents().encoded())
        plain[0] = 2
        #expect(throws: CodecError.self) { try DocumentContents(decoding: Data(plain)) }
    }

    @Test func placeholdersAreRecognizedOnlyExactly() {
        let reference = BlobReference(to: image)
        var placeholder = reference.placeholder
        #expect(BlobReference(placeholder: placeholder) == reference)
        placeholder[3] ^= 1
        #expect(BlobReference(placeholder: placeholder) == nil)
        #expect(BlobReference(placeholder: reference.placeholder + Data([0])) == nil)
        #expect(BlobReference(placeholder: small) == nil)
    }
}
