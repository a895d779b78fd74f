import FolioCore
import FolioModels
import FolioTesting
import Foundation
import Testing

/// Random pages operations over a small pool of image names, valid and hostile.
enum PagesSource: OperationSource {
    typealias Operation = PagesDocument.Operation

    static let validNames = ["cover.png", "a.jpg", "b", "é.png", "e\u{301}.png", ".hidden", "with space.gif"]
    static let invalidNames = [
        "", ".", "..", "a/b", "/abs", "back\\slash", "nul\0", "../escape.png",
        String(repeating: "x", count: 1020),
    ]

    static func bytes(using generator: inout SplitMix64) -> Data {
        Data((0..<generator.int(in: 0...16)).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }

    static func operation(for model: PagesDocument, using generator: inout SplitMix64) -> Operation {
        let existing = model.imageNames
        let name =
            !existing.isEmpty && generator.chance(1, in: 2) ? generator.pick(existing) : generator.pick(validNames)
        switch generator.int(in: 0...9) {
        case 0, 1: return .setText(TextSource.randomText(0...6, using: &generator))
        case 2, 3, 4: return .putImage(name: name, bytes: bytes(using: &generator))
        case 5, 6: return .removeImage(name: name)
        case 7: return .putImage(name: generator.pick(invalidNames), bytes: bytes(using: &generator))
        case 8: return .removeImage(name: generator.pick(invalidNames))
        default: return .removeImage(name: generator.pick(validNames))
        }
    }

    static func follower(of previous: Operation, in model: PagesDocument, using generator: inout SplitMix64)
        -> Operation
    {
        switch previous {
        case .setText: return .setText(TextSource.randomText(0...6, using: &generator))
        case .putImage(let name, _): return .putImage(name: name, bytes: bytes(using: &generator))
        case .removeImage: return operation(for: model, using: &generator)
        }
    }

    static func checkInvariants(_ model: PagesDocument) {
        precondition(model.imageNames.allSatisfy(PagesDocument.isValidImageName), "an invalid image name got in")
    }

    static func summary(_ model: PagesDocument) -> String {
        "\(model.text.debugDescription) + \(model.imageNames.map { "\($0)(\(model.images[$0]!.count))" })"
    }
}

@Suite struct PagesDocumentTests {
    typealias Operation = PagesDocument.Operation

    static func sample() throws -> PagesDocument {
        try PagesDocument(text: "Chapter 1\n", images: ["cover.png": Data([1, 2, 3]), "b.jpg": Data()])
    }

    static func package(_ files: [String: String]) throws -> DocumentContents {
        .package(try FilePackage(files: files.mapValues { Data($0.utf8) }))
    }

    static let info = #"{"formatVersion":1,"generator":"Folio","images":[]}"#

    @Test func typeIsAPackage() {
        let type = PagesDocument.documentType
        #expect(type.identifier == "com.folio.pages")
        #expect(type.fileExtensions == ["folio-pages"])
        #expect(type.isPackage)
    }

    @Test func setTextIsUndoneBySetTextOfTheOldText() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.setText("new"))
        #expect(document.text == "new")
        #expect(inverse == .setText("Chapter 1\n"))
    }

    @Test func putImageOfANewNameIsUndoneByRemoveImage() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.putImage(name: "z.png", bytes: Data([9])))
        #expect(document.imageNames == ["b.jpg", "cover.png", "z.png"])
        #expect(document.images["z.png"] == Data([9]))
        #expect(inverse == .removeImage(name: "z.png"))
    }

    @Test func putImageOverAnImageIsUndoneByPutImageOfTheOldBytes() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.putImage(name: "cover.png", bytes: Data([7])))
        #expect(document.images["cover.png"] == Data([7]))
        #expect(inverse == .putImage(name: "cover.png", bytes: Data([1, 2, 3])))
        _ = try document.apply(inverse)
        #expect(document == (try Self.sample()))
    }

    @Test func removeImageIsUndoneByPutImageOfItsBytes() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.removeImage(name: "cover.png"))
        #expect(document.imageNames == ["b.jpg"])
        #expect(inverse == .putImage(name: "cover.png", bytes: Data([1, 2, 3])))
    }

    @Test(arguments: PagesSource.invalidNames)
    func invalidImageNamesAreRefused(name: String) throws {
        #expect(!PagesDocument.isValidImageName(name))
        var document = try Self.sample()
        do {
            _ = try document.apply(.putImage(name: name, bytes: Data([0])))
            Issue.record("\(name.debugDescription) was accepted")
        } catch let error as ModelError {
            #expect(error.code == .invalidOperation)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
        #expect(document == (try Self.sample()))
        #expect(throws: ModelError.self) { try PagesDocument(text: "", images: [name: Data()]) }
    }

    @Test func removingAMissingImageIsRefused() throws {
        var document = try Self.sample()
        #expect(throws: ModelError.self) { try document.apply(.removeImage(name: "missing.png")) }
        #expect(document == (try Self.sample()))
    }

    @Test func equalityComparesTextAndNamesByScalars() throws {
        #expect(try PagesDocument(text: "é") != PagesDocument(text: "e\u{301}"))
        #expect(
            try PagesDocument(text: "", images: ["é": Data()]) != PagesDocument(text: "", images: ["e\u{301}": Data()]))
        #expect(try Self.sample() == Self.sample())
    }

    // MARK: Snapshots

    @Test func contentsLayOutTextImagesAndInfo() throws {
        guard case .package(let package) = try Self.sample().contents() else {
            Issue.record("a pages snapshot is not a package")
            return
        }
        #expect(package.filePaths.map(\.description) == ["Info.json", "images/b.jpg", "images/cover.png", "text.txt"])
        #expect(package["text.txt"]?.contents == Data("Chapter 1\n".utf8))
        #expect(package["images/cover.png"]?.contents == Data([1, 2, 3]))
        let info = #"{"formatVersion":1,"generator":"Folio","images":["b.jpg","cover.png"]}"# + "\n"
        #expect(package["Info.json"]?.contents == Data(info.utf8))
        #expect(package.allDirectories.map(\.description) == ["images"])
    }

    @Test func aPackageWithoutAnImagesDirectoryLoads() throws {
        let document = try PagesDocument(contents: Self.package(["text.txt": "hi", "Info.json": Self.info]))
        #expect(document.text == "hi")
        #expect(document.images.isEmpty)
    }

    @Test func unknownFilesOutsideImagesAreIgnored() throws {
        let document = try PagesDocument(
            contents: Self.package([
                "text.txt": "hi", "Info.json": Self.info, ".manifest": "x", "extra/notes.txt": "y",
            ]))
        #expect(document == (try PagesDocument(text: "hi")))
    }

    @Test(arguments: [
        ["Info.json": info],
        ["text.txt": "hi"],
        ["text.txt": "hi", "Info.json": "not json"],
        ["text.txt": "hi", "Info.json": "[]"],
        ["text.txt": "hi", "Info.json": #"{"formatVersion":2,"generator":"Folio","images":[]}"#],
        ["text.txt": "hi", "Info.json": #"{"formatVersion":"1","generator":"Folio","images":[]}"#],
        ["text.txt": "hi", "Info.json": #"{"generator":"Folio","images":[]}"#],
        ["text.txt": "hi", "Info.json": #"{"formatVersion":1,"images":[]}"#],
        ["text.txt": "hi", "Info.json": #"{"formatVersion":1,"generator":"Folio","images":[],"x":1}"#],
        ["text.txt": "hi", "Info.json": #"{"formatVersion":1,"generator":"Folio","images":["a.png"]}"#],
        ["text.txt": "hi", "Info.json": info, "images/a.png": "x"],
        [
            "text.txt": "hi", "Info.json": #"{"formatVersion":1,"generator":"Folio","images":["a.png"]}"#,
            "images/a.png/b": "x",
        ],
        ["text.txt": "hi", "Info.json": info, "images": "a file"],
    ])
    func malformedPackagesAreRefused(files: [String: String]) throws {
        let contents = try Self.package(files)
        do {
            _ = try PagesDocument(contents: contents)
            Issue.record("\(files.keys.sorted()) loaded")
        } catch let error as ModelError {
            #expect(error.code == .invalidContents)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
    }

    @Test func theUnsupportedVersionIsNamed() throws {
        let info = #"{"formatVersion":7,"generator":"Folio 9","images":[],"pages":3}"#
        let contents = try Self.package(["text.txt": "", "Info.json": info])
        do {
            _ = try PagesDocument(contents: contents)
            Issue.record("format version 7 loaded")
        } catch let error as ModelError {
            #expect(error.code == .invalidContents)
            #expect(error.message.contains("formatVersion 7"))
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
    }

    @Test func flatDataAndInvalidUTF8AreRefused() throws {
        #expect(throws: ModelError.self) { try PagesDocument(contents: .data(Data("hi".utf8))) }
        let package = try FilePackage(files: ["text.txt": Data([0xFF]), "Info.json": Data(Self.info.utf8)])
        #expect(throws: ModelError.self) { try PagesDocument(contents: .package(package)) }
    }

    // MARK: Encoding

    @Test(arguments: [
        Operation.setText(""), .setText("Chapter 1\n👍🏽"), .putImage(name: "cover.png", bytes: Data([0, 255, 7])),
        .putImage(name: "../bad", bytes: Data()), .removeImage(name: "cover.png"),
    ])
    func operationsRoundTrip(operation: Operation) throws {
        #expect(try Operation.decodeGroup(Operation.encodeGroup([operation])) == [operation])
    }

    // MARK: Combining

    @Test func combiningRepeatedEdits() {
        #expect(PagesDocument.combine(.setText("a"), .setText("b")) == .setText("b"))
        #expect(
            PagesDocument.combine(.putImage(name: "x", bytes: Data([1])), .putImage(name: "x", bytes: Data([2])))
                == .putImage(name: "x", bytes: Data([2])))
        #expect(PagesDocument.combine(.putImage(name: "x", bytes: Data()), .putImage(name: "y", bytes: Data())) == nil)
        #expect(PagesDocument.combine(.putImage(name: "x", bytes: Data()), .removeImage(name: "x")) == nil)
        #expect(PagesDocument.combine(.removeImage(name: "x"), .putImage(name: "x", bytes: Data())) == nil)
    }

    // MARK: Laws over random sequences

    @Test func inversesRestoreTheExactState() {
        ModelLaws<PagesSource>.checkInverses(seed: TestSeed.make(), walks: 60, steps: 40)
    }

    @Test func combinedOperationsActLikeThePair() {
        let seed = TestSeed.make()
        let combined = ModelLaws<PagesSource>.checkCombine(seed: seed, trials: 2000)
        #expect(combined > 300, "seed \(seed): only \(combined) of 2000 pairs combined")
    }

    @Test func operationGroupsRoundTripAndTruncationThrows() {
        ModelLaws<PagesSource>.checkOperationCoding(seed: TestSeed.make(), groups: 300)
    }

    @Test func contentsRoundTrip() {
        ModelLaws<PagesSource>.checkContentsRoundTrip(seed: TestSeed.make(), trials: 200, steps: 30)
    }
}
