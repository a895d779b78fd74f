// document-contents: `DocumentContents` decoded from untrusted bytes and loaded by each built-in model.
// `DocumentContents(decoding:)` on untrusted bytes (what baselines, resolutions and checkpoints
// carry), then each built-in model's `init(contents:)` on what decodes.
// Oracles: nothing traps; decoded contents re-encode to bytes that decode to equal contents and are a fixed point;
// every package path accepted is safe byte for byte; a model that loads contents gives contents that load to an
// equal model, and its contents are a fixed point.
import FolioCore
import FolioModels
import Foundation

enum Harness {
    static func run(_ input: UnsafeRawBufferPointer) {
        guard let contents = try? DocumentContents(decoding: Data(input)) else { return }
        let encoded = contents.encoded()
        guard let again = try? DocumentContents(decoding: encoded) else {
            oracleFailed("decoded contents re-encode to bytes that do not decode")
        }
        require(again == contents, "decoded contents re-encode to other contents")
        require(again.encoded() == encoded, "the encoding of contents is not stable")
        if case .package(let package) = contents {
            for path in package.filePaths { PathChecks.requireSafe(path, "a package file") }
            for path in package.directories { PathChecks.requireSafe(path, "a package directory") }
        }
        check(TextDocument.self, contents)
        check(RecordsDocument.self, contents)
        check(PagesDocument.self, contents)
    }

    static func check<Model: DocumentModel & Equatable>(_ type: Model.Type, _ contents: DocumentContents) {
        guard let model = try? Model(contents: contents) else { return }
        let snapshot = model.contents()
        let reloaded: Model
        do {
            reloaded = try Model(contents: snapshot)
        } catch {
            oracleFailed("\(Model.self) loaded contents, but not its own snapshot of them: \(error)")
        }
        require(reloaded == model, "\(Model.self): loading its own snapshot gives another model")
        require(reloaded.contents() == snapshot, "\(Model.self): its snapshot is not stable")
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [DocumentContents] = [
            TextDocument(text: "Hello, world\nsecond line é\u{301}\n").contents(),
            .data(Data()),
            .data(Data([0xEF, 0xBB, 0xBF, 0x41])),
        ]
        if let records = try? RecordsDocument(records: [
            .init(id: "r1", fields: ["name": "Ada", "note": "a \"quoted\" value\n"]),
            .init(id: "r2", fields: [:]),
        ]) {
            seeds.append(records.contents())
        }
        if let pages = try? PagesDocument(
            text: "Pages text", images: ["cover.png": Data([0x89, 0x50, 0x4E, 0x47]), "b.jpg": Data()])
        {
            seeds.append(pages.contents())
        }
        if let package = try? FilePackage(files: ["a/b/c.txt": Data("c".utf8), "top": Data()]) {
            var withDirectory = package
            try? withDirectory.addDirectory(PackagePath("empty/inner"))
            seeds.append(.package(withDirectory))
        }
        var encoded = seeds.map { Array($0.encoded()) }
        // Package form 2: members written as blob references (read as their placeholders) beside inline ones.
        var byReference: [DocumentContents] = []
        if let one = SampleBlobs.package(inline: ["index.txt": Data("hello\n".utf8)], referenced: ["media/photo.jpg"]) {
            byReference.append(one)
        }
        if case .package(var three)? = SampleBlobs.package(
            inline: ["a.txt": Data("a".utf8)], referenced: ["x.bin", "m/y.bin", "m/z.bin"])
        {
            try? three.addDirectory(PackagePath("empty"))
            byReference.append(.package(three))
        }
        encoded += byReference.map { Array(SampleBlobs.contents($0).bytes) }
        // Pages whose image is a blob reference (its text and Info.json are no blob members): the model loads with
        // the image's placeholder.
        if let pages = try? PagesDocument(
            text: "Pages with a blob", images: ["cover.png": SampleBlobs.blobs[2], "small.png": Data([1])])
        {
            encoded.append(
                Array(SampleBlobs.contents(pages.contents(), members: { PagesDocument.isBlobMember($0) }).bytes))
        }
        return encoded
    }
}
