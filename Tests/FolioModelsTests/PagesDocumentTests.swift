import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Random pages operations over a small pool of image names, valid and hostile, and text edits at positions inside
/// and outside the text (the text ones as ``TextSource`` makes them).
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
        switch generator.int(in: 0...15) {
        case 0, 1: return .setText(TextSource.randomText(0...6, using: &generator))
        case 2, 3, 4: return .putImage(name: name, bytes: bytes(using: &generator))
        case 5, 6: return .removeImage(name: name)
        case 7: return .putImage(name: generator.pick(invalidNames), bytes: bytes(using: &generator))
        case 8: return .removeImage(name: generator.pick(invalidNames))
        case 9: return .removeImage(name: generator.pick(validNames))
        default: return textOperation(for: model, using: &generator)
        }
    }

    /// A random `insertText` or `deleteText`: ``TextSource``'s next insertion or deletion for the same text, valid
    /// or not.
    static func textOperation(for model: PagesDocument, using generator: inout SplitMix64) -> Operation {
        let text = TextDocument(text: model.text)
        while true {
            switch TextSource.operation(for: text, using: &generator) {
            case .insert(let position, let inserted): return .insertText(at: position, text: inserted)
            case .delete(let position, let count): return .deleteText(at: position, count: count)
            default: continue
            }
        }
    }

    static func follower(of previous: Operation, in model: PagesDocument, using generator: inout SplitMix64)
        -> Operation
    {
        switch previous {
        case .insertText(let position, let text):
            return .insertText(
                at: position + text.unicodeScalars.count, text: TextSource.randomText(0...2, using: &generator))
        case .deleteText(let position, _):
            let count = generator.int(in: 0...3)
            return generator.chance(1, in: 2)
                ? .deleteText(at: position, count: count) : .deleteText(at: position - count, count: count)
        case .setText: return .setText(TextSource.randomText(0...6, using: &generator))
        case .putImage(let name, _): return .putImage(name: name, bytes: bytes(using: &generator))
        case .removeImage: return operation(for: model, using: &generator)
        }
    }

    static func checkInvariants(_ model: PagesDocument) {
        model.storage._checkInvariants()
        precondition(model.text.unicodeScalars.count == model.scalarCount, "scalarCount disagrees with the text")
        precondition(model.imageNames.allSatisfy(PagesDocument.isValidImageName), "an invalid image name got in")
    }

    static func summary(_ model: PagesDocument) -> String {
        "\(model.text.debugDescription) + \(model.imageNames.map { "\($0)(\(model.images[$0]!.count))" })"
    }
}

@Suite(.workPool) struct PagesDocumentTests {
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

    @Test func insertTextIsUndoneByDeleteTextOfTheInsertedScalars() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.insertText(at: 8, text: "e\u{301}👍🏽 "))
        #expect(document.text.unicodeScalars.elementsEqual("Chapter e\u{301}👍🏽 1\n".unicodeScalars))
        #expect(document.scalarCount == 15)
        #expect(inverse == .deleteText(at: 8, count: 5))
        #expect(try document.apply(inverse) == .insertText(at: 8, text: "e\u{301}👍🏽 "))
        #expect(document == (try Self.sample()))
    }

    @Test func insertTextAtTheEndIsAllowed() throws {
        var document = try Self.sample()
        _ = try document.apply(.insertText(at: 10, text: "Chapter 2\n"))
        #expect(document.text == "Chapter 1\nChapter 2\n")
    }

    @Test func deleteTextIsUndoneByInsertTextOfTheRemovedText() throws {
        var document = try PagesDocument(text: "Chapter 👍🏽 1\n", images: ["cover.png": Data([1])])
        let inverse = try document.apply(.deleteText(at: 7, count: 4))
        #expect(document.text == "Chapter1\n")
        #expect(inverse == .insertText(at: 7, text: " 👍🏽 "))
        _ = try document.apply(inverse)
        #expect(document == (try PagesDocument(text: "Chapter 👍🏽 1\n", images: ["cover.png": Data([1])])))
    }

    @Test func textEditsLeaveTheImagesAlone() throws {
        var document = try Self.sample()
        _ = try document.apply(.insertText(at: 0, text: "Book\n"))
        _ = try document.apply(.deleteText(at: 5, count: 8))
        #expect(document.text == "Book\n1\n")
        #expect(document.images == (try Self.sample()).images)
    }

    @Test(arguments: [
        Operation.insertText(at: -1, text: "x"), .insertText(at: 11, text: "x"), .insertText(at: Int.min, text: ""),
        .insertText(at: Int.max, text: "x"), .deleteText(at: 0, count: 11), .deleteText(at: 10, count: 1),
        .deleteText(at: -1, count: 1), .deleteText(at: 1, count: -1), .deleteText(at: 2, count: Int.max),
        .deleteText(at: Int.max, count: Int.max), .deleteText(at: Int.min, count: Int.max),
        .deleteText(at: 11, count: 0),
    ])
    func outOfRangeTextEditsAreRefusedAndChangeNothing(operation: Operation) throws {
        var document = try Self.sample()
        do {
            _ = try document.apply(operation)
            Issue.record("\(operation) was applied")
        } catch let error as ModelError {
            #expect(error.code == .invalidOperation)
            #expect(error.message.contains("the text has 10 scalars"), "\(error.message)")
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
        #expect(document == (try Self.sample()))
        document.storage._checkInvariants()
    }

    @Test func equalityAndHashingIgnoreTheTextsEditingHistory() throws {
        var typed = try PagesDocument(text: "", images: ["a.png": Data([1])])
        for (index, scalar) in "héllo".unicodeScalars.enumerated() {
            _ = try typed.apply(.insertText(at: index, text: String(scalar)))
        }
        _ = try typed.apply(.insertText(at: 0, text: "x"))
        _ = try typed.apply(.deleteText(at: 0, count: 1))
        let loaded = try PagesDocument(text: "héllo", images: ["a.png": Data([1])])
        #expect(typed == loaded)
        #expect(typed.hashValue == loaded.hashValue)
        #expect(try PagesDocument(contents: typed.contents()) == loaded)
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
        .putImage(name: "../bad", bytes: Data()), .removeImage(name: "cover.png"), .insertText(at: 0, text: ""),
        .insertText(at: 104_852, text: "e\u{301}👍🏽"), .insertText(at: -1, text: "x"), .deleteText(at: 3, count: 0),
        .deleteText(at: Int.min, count: Int.max), .deleteText(at: Int.max, count: -1),
    ])
    func operationsRoundTrip(operation: Operation) throws {
        #expect(try Operation.decodeGroup(Operation.encodeGroup([operation])) == [operation])
    }

    /// The first three tags keep the bytes the first logs hold; the text edits take new tags, in the text model's
    /// compact form (typing one ASCII character takes 4 bytes).
    @Test(
        arguments: [
            (Operation.setText("a"), [0, 1, 0x61]), (.putImage(name: "b", bytes: Data([7])), [1, 1, 0x62, 1, 7]),
            (.removeImage(name: "b"), [2, 1, 0x62]), (.insertText(at: 17, text: "a"), [3, 17, 1, 0x61]),
            (.deleteText(at: 300, count: 1), [4, 0xAC, 0x02, 1]),
        ] as [(Operation, [UInt8])])
    func operationsEncodeToTheirBinaryForm(operation: Operation, bytes: [UInt8]) throws {
        var writer = BinaryWriter()
        operation.encode(into: &writer)
        #expect(writer.bytes == bytes)
        #expect(try Operation.decodeGroup(Data([1] + bytes)) == [operation])
    }

    /// Untrusted bytes that are not a text edit: cut short, a length or a varint too large, an unknown tag. Each is
    /// refused with a `CodecError` (never a trap).
    @Test(
        arguments: [
            [1, 3], [1, 3, 5], [1, 3, 5, 4, 0x61], [1, 4], [1, 4, 5], [1, 3, 0x80], [1, 4, 0xAC],
            // A text length past the payload limit, and one of 2^64 - 1.
            [1, 3, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x61],
            [1, 3, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x61],
            // Positions and counts of more than 64 bits.
            [1, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0],
            [1, 4, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            [1, 4, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
            // A group that claims more operations than its bytes hold, invalid UTF-8, trailing bytes, an unknown tag.
            [0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 4, 0, 1], [1, 3, 0, 1, 0xFF], [1, 4, 0, 1, 0], [1, 5, 0, 1],
        ] as [[UInt8]])
    func hostileTextEditBytesAreRefused(bytes: [UInt8]) {
        do {
            let decoded = try Operation.decodeGroup(Data(bytes))
            Issue.record("\(bytes) decoded as \(decoded)")
        } catch let error as CodecError {
            #expect(error.offset >= 0 && error.offset <= bytes.count)
        } catch {
            Issue.record("threw \(error), not CodecError")
        }
    }

    /// A count that decodes but is larger than any text is refused when applied, not when decoded, so that every
    /// encoded operation decodes back to itself (as a text document's does).
    @Test func aHugeDecodedCountIsRefusedByApply() throws {
        let bytes = Data([1, 4, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F])
        let operations = try Operation.decodeGroup(bytes)
        #expect(operations == [.deleteText(at: 0, count: Int.max)])
        var document = try Self.sample()
        #expect(throws: ModelError.self) { try document.apply(operations[0]) }
        #expect(document == (try Self.sample()))
    }

    // MARK: Combining

    @Test func typingAndDeletingCombineAsInATextDocument() {
        #expect(
            PagesDocument.combine(.insertText(at: 3, text: "ab"), .insertText(at: 5, text: "c"))
                == .insertText(at: 3, text: "abc"))
        #expect(
            PagesDocument.combine(.insertText(at: 0, text: "👍🏽"), .insertText(at: 2, text: "!"))
                == .insertText(at: 0, text: "👍🏽!"))
        #expect(
            PagesDocument.combine(.deleteText(at: 9, count: 1), .deleteText(at: 8, count: 1))
                == .deleteText(at: 8, count: 2))
        #expect(
            PagesDocument.combine(.deleteText(at: 4, count: 1), .deleteText(at: 4, count: 2))
                == .deleteText(at: 4, count: 3))
    }

    @Test(arguments: [
        (Operation.insertText(at: 3, text: "ab"), Operation.insertText(at: 4, text: "c")),
        (.insertText(at: 3, text: "a"), .deleteText(at: 3, count: 1)),
        (.deleteText(at: 3, count: 1), .insertText(at: 3, text: "a")),
        (.deleteText(at: 3, count: 1), .deleteText(at: 1, count: 1)),
        (.deleteText(at: 0, count: Int.max), .deleteText(at: 0, count: 1)),
        (.insertText(at: -1, text: "a"), .insertText(at: 0, text: "b")),
        (.setText("a"), .insertText(at: 1, text: "b")),
        (.insertText(at: 0, text: "a"), .setText("b")),
    ])
    func otherTextEditPairsDoNotCombine(first: Operation, second: Operation) {
        #expect(PagesDocument.combine(first, second) == nil)
    }

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
