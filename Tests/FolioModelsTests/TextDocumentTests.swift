import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Random text operations, with texts mixing scalars that combine into one character (`e` + U+0301, skin tones,
/// flags, CRLF), so positions that split a character are exercised.
enum TextSource: OperationSource {
    static let pieces = ["a", "b", "z", " ", "\n", "é", "e\u{301}", "\u{301}", "👍🏽", "🇫🇷", "\r\n", "\r", "日本", "\0"]

    static func randomText(_ pieces: ClosedRange<Int>, using generator: inout SplitMix64) -> String {
        (0..<generator.int(in: pieces)).map { _ in generator.pick(Self.pieces) }.joined()
    }

    static func operation(for model: TextDocument, using generator: inout SplitMix64) -> TextDocument.Operation {
        let length = model.scalarCount
        switch generator.int(in: 0...19) {
        case 0...7:
            return .insert(at: generator.int(in: 0...length), text: randomText(1...3, using: &generator))
        case 8...12:
            let position = generator.int(in: 0...length)
            return .delete(at: position, count: generator.int(in: 0...min(4, length - position)))
        case 13, 14:
            return .append(randomText(0...3, using: &generator))
        case 15:
            return .replace(randomText(0...20, using: &generator))
        case 16:
            let position = generator.pick([-1, length + 1, length + generator.int(in: 2...9), Int.min, Int.max])
            return .insert(at: position, text: randomText(0...2, using: &generator))
        case 17:
            let position = generator.int(in: 0...length)
            return generator.pick([
                .delete(at: position, count: length - position + 1), .delete(at: position, count: -1),
                .delete(at: -1, count: 1), .delete(at: position, count: Int.max), .delete(at: length + 1, count: 0),
            ])
        default:
            return generator.chance(1, in: 2)
                ? .insert(at: generator.int(in: 0...length), text: "")
                : .delete(at: generator.int(in: 0...length), count: 0)
        }
    }

    static func follower(of previous: TextDocument.Operation, in model: TextDocument, using generator: inout SplitMix64)
        -> TextDocument.Operation
    {
        switch previous {
        case .insert(let position, let text):
            return .insert(at: position + text.unicodeScalars.count, text: randomText(0...2, using: &generator))
        case .delete(let position, _):
            let count = generator.int(in: 0...3)
            return generator.chance(1, in: 2)
                ? .delete(at: position, count: count) : .delete(at: position - count, count: count)
        default:
            return operation(for: model, using: &generator)
        }
    }

    static func checkInvariants(_ model: TextDocument) {
        model.storage._checkInvariants()
        precondition(model.text.unicodeScalars.count == model.scalarCount, "scalarCount disagrees with the text")
    }

    static func summary(_ model: TextDocument) -> String {
        model.text.debugDescription
    }
}

@Suite(.workPool) struct TextDocumentTests {
    typealias Operation = TextDocument.Operation

    @Test func typeIsFlatPlainText() {
        let type = TextDocument.documentType
        #expect(type.identifier == "com.folio.text")
        #expect(type.conforms(to: "public.plain-text"))
        #expect(type.fileExtensions == ["txt"])
        #expect(!type.isPackage)
    }

    @Test func newDocumentIsEmpty() {
        let document = TextDocument()
        #expect(document.text == "")
        #expect(document.scalarCount == 0)
        #expect(document == TextDocument(text: ""))
    }

    @Test func positionsCountUnicodeScalars() throws {
        var document = TextDocument(text: "e\u{301}👍🏽!")
        #expect(document.scalarCount == 5)
        _ = try document.apply(.insert(at: 3, text: "|"))
        #expect(document.text.unicodeScalars.elementsEqual("e\u{301}👍|🏽!".unicodeScalars))
        _ = try document.apply(.delete(at: 1, count: 1))
        #expect(document.text.unicodeScalars.elementsEqual("e👍|🏽!".unicodeScalars))
    }

    @Test func insertReturnsDeleteOfTheInsertedScalars() throws {
        var document = TextDocument(text: "Hello world")
        let inverse = try document.apply(.insert(at: 5, text: ", dear"))
        #expect(document.text == "Hello, dear world")
        #expect(inverse == .delete(at: 5, count: 6))
        #expect(try document.apply(inverse) == .insert(at: 5, text: ", dear"))
        #expect(document.text == "Hello world")
    }

    @Test func insertAtTheEndIsAllowed() throws {
        var document = TextDocument(text: "ab")
        _ = try document.apply(.insert(at: 2, text: "c"))
        #expect(document.text == "abc")
    }

    @Test func deleteReturnsInsertOfTheRemovedText() throws {
        var document = TextDocument(text: "Hello, dear world")
        let inverse = try document.apply(.delete(at: 5, count: 6))
        #expect(document.text == "Hello world")
        #expect(inverse == .insert(at: 5, text: ", dear"))
    }

    @Test func appendReturnsDeleteAtTheOldEnd() throws {
        var document = TextDocument(text: "milk")
        let inverse = try document.apply(.append("\neggs👍🏽"))
        #expect(document.text == "milk\neggs👍🏽")
        #expect(inverse == .delete(at: 4, count: 7))
        _ = try document.apply(inverse)
        #expect(document.text == "milk")
    }

    @Test func replaceReturnsReplaceWithTheOldText() throws {
        var document = TextDocument(text: "old")
        let inverse = try document.apply(.replace("brand new"))
        #expect(document.text == "brand new")
        #expect(inverse == .replace("old"))
    }

    @Test(arguments: [
        Operation.insert(at: -1, text: "x"), .insert(at: 4, text: "x"), .insert(at: Int.min, text: ""),
        .delete(at: 0, count: 4), .delete(at: 3, count: 1), .delete(at: -1, count: 1), .delete(at: 1, count: -1),
        .delete(at: 2, count: Int.max), .delete(at: Int.max, count: Int.max), .delete(at: 4, count: 0),
    ])
    func outOfRangeOperationsAreRefusedAndChangeNothing(operation: Operation) {
        var document = TextDocument(text: "abc")
        #expect(throws: ModelError.self) { try document.apply(operation) }
        do {
            _ = try document.apply(operation)
        } catch let error as ModelError {
            #expect(error.code == .invalidOperation)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
        #expect(document.text == "abc")
    }

    @Test func equalityComparesScalarsNotCanonicalEquivalence() {
        #expect("é" == "e\u{301}")
        #expect(TextDocument(text: "é") != TextDocument(text: "e\u{301}"))
        #expect(Operation.insert(at: 0, text: "é") != .insert(at: 0, text: "e\u{301}"))
        #expect(Operation.append("é") == .append("é"))
    }

    @Test func equalityIgnoresEditingHistory() throws {
        var typed = TextDocument()
        for (index, character) in "hello".unicodeScalars.enumerated() {
            _ = try typed.apply(.insert(at: index, text: String(character)))
        }
        _ = try typed.apply(.insert(at: 0, text: "x"))
        _ = try typed.apply(.delete(at: 0, count: 1))
        let loaded = TextDocument(text: "hello")
        #expect(typed == loaded)
        #expect(typed.hashValue == loaded.hashValue)
    }

    // MARK: Snapshots

    @Test func contentsAreTheUTF8Bytes() {
        let document = TextDocument(text: "Grüße 👍🏽\n")
        #expect(document.contents() == .data(Data("Grüße 👍🏽\n".utf8)))
    }

    @Test func loadingKeepsEveryByteIncludingAByteOrderMark() throws {
        let bytes = Data([0xEF, 0xBB, 0xBF]) + Data("x\r\ny".utf8)
        let document = try TextDocument(contents: .data(bytes))
        #expect(document.scalarCount == 5)
        #expect(document.contents() == .data(bytes))
    }

    @Test(arguments: [[0xFF], [0xE2, 0x82], [0x61, 0xC0, 0x80], [0xED, 0xA0, 0x80]] as [[UInt8]])
    func invalidUTF8IsRefused(bytes: [UInt8]) {
        do {
            _ = try TextDocument(contents: .data(Data(bytes)))
            Issue.record("\(bytes) loaded")
        } catch let error as ModelError {
            #expect(error.code == .invalidContents)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
    }

    @Test func aPackageIsRefused() throws {
        let package = try FilePackage(files: ["text.txt": Data("hi".utf8)])
        do {
            _ = try TextDocument(contents: .package(package))
            Issue.record("a package loaded as text")
        } catch let error as ModelError {
            #expect(error.code == .invalidContents)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
    }

    // MARK: Encoding

    @Test func typingOneCharacterEncodesInFourBytes() {
        var writer = BinaryWriter()
        Operation.insert(at: 17, text: "a").encode(into: &writer)
        #expect(writer.bytes == [0, 17, 1, 0x61])
        writer = BinaryWriter()
        Operation.delete(at: 300, count: 1).encode(into: &writer)
        #expect(writer.bytes == [1, 0xAC, 0x02, 1])
    }

    @Test(arguments: [
        Operation.insert(at: 0, text: ""), .insert(at: 104_852, text: "e\u{301}👍🏽"), .delete(at: 3, count: 0),
        .append("milk\n"), .replace(""), .replace("🇫🇷\r\n"), .insert(at: -1, text: "x"),
        .delete(at: Int.min, count: Int.max),
    ])
    func operationsRoundTrip(operation: Operation) throws {
        let decoded = try Operation.decodeGroup(Operation.encodeGroup([operation]))
        #expect(decoded == [operation])
    }

    @Test func unknownTagIsRefused() {
        #expect(throws: CodecError.self) { try Operation.decodeGroup(Data([1, 9])) }
        do {
            _ = try Operation.decodeGroup(Data([1, 9]))
        } catch let error as CodecError {
            #expect(error.code == .invalidValue)
            #expect(error.offset == 1)
        } catch {
            Issue.record("threw \(error), not CodecError")
        }
    }

    @Test func invalidUTF8InAnOperationIsRefused() {
        do {
            _ = try Operation.decodeGroup(Data([1, 2, 1, 0xFF]))
            Issue.record("invalid UTF-8 decoded")
        } catch let error as CodecError {
            #expect(error.code == .invalidValue)
        } catch {
            Issue.record("threw \(error), not CodecError")
        }
    }

    // MARK: Combining

    @Test func typingCombinesIntoOneInsert() {
        #expect(
            TextDocument.combine(.insert(at: 3, text: "ab"), .insert(at: 5, text: "c")) == .insert(at: 3, text: "abc"))
        #expect(
            TextDocument.combine(.insert(at: 0, text: "👍🏽"), .insert(at: 2, text: "!")) == .insert(at: 0, text: "👍🏽!"))
    }

    @Test func backspacingAndForwardDeletingCombineIntoOneDelete() {
        #expect(TextDocument.combine(.delete(at: 9, count: 1), .delete(at: 8, count: 1)) == .delete(at: 8, count: 2))
        #expect(TextDocument.combine(.delete(at: 9, count: 2), .delete(at: 6, count: 3)) == .delete(at: 6, count: 5))
        #expect(TextDocument.combine(.delete(at: 4, count: 1), .delete(at: 4, count: 2)) == .delete(at: 4, count: 3))
    }

    @Test(arguments: [
        (Operation.insert(at: 3, text: "ab"), Operation.insert(at: 4, text: "c")),
        (.insert(at: 3, text: "ab"), .insert(at: 3, text: "c")),
        (.insert(at: 3, text: "a"), .delete(at: 3, count: 1)),
        (.delete(at: 3, count: 1), .insert(at: 3, text: "a")),
        (.delete(at: 3, count: 1), .delete(at: 1, count: 1)),
        (.delete(at: 1, count: 1), .delete(at: 0, count: 2)),
        (.append("a"), .append("b")),
        (.replace("a"), .replace("b")),
        (.delete(at: 0, count: Int.max), .delete(at: 0, count: 1)),
    ])
    func otherPairsDoNotCombine(first: Operation, second: Operation) {
        #expect(TextDocument.combine(first, second) == nil)
    }

    // MARK: Laws over random sequences

    @Test func inversesRestoreTheExactState() {
        ModelLaws<TextSource>.checkInverses(seed: TestSeed.make(), walks: 60, steps: 60)
    }

    @Test func combinedOperationsActLikeThePair() {
        let seed = TestSeed.make()
        let combined = ModelLaws<TextSource>.checkCombine(seed: seed, trials: 3000)
        #expect(combined > 500, "seed \(seed): only \(combined) of 3000 pairs combined")
    }

    /// The one-pass combination of a group equals combining its operations pair by pair.
    @Test func aGroupCombinesInOnePassAsPairByPair() {
        let seed = TestSeed.make()
        let shortened = ModelLaws<TextSource>.checkCombinedFold(seed: seed, lists: 1500)
        #expect(shortened > 500, "seed \(seed): only \(shortened) of 1500 lists combined at all")
    }

    @Test func operationGroupsRoundTripAndTruncationThrows() {
        ModelLaws<TextSource>.checkOperationCoding(seed: TestSeed.make(), groups: 400)
    }

    @Test func contentsRoundTrip() {
        ModelLaws<TextSource>.checkContentsRoundTrip(seed: TestSeed.make(), trials: 200, steps: 40)
    }
}
