import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// `operations(becoming:)` of the built-in models, by property over random pairs of states: the operations apply
/// in order without a refusal and reach the target exactly (scalar for scalar), and a state becomes itself with none.
@Suite(.workPool) struct OperationsBecomingTests {
    static let seeds: [UInt64] = Array(1...60)

    static func randomState<Source: OperationSource>(_ source: Source.Type, using generator: inout SplitMix64)
        -> Source.Model
    {
        var model = Source.Model()
        for _ in 0..<generator.int(in: 0...25) {
            _ = try? model.apply(Source.operation(for: model, using: &generator))
        }
        return model
    }

    static func check<Source: OperationSource>(_ source: Source.Type, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let start = randomState(source, using: &generator)
        let target = generator.chance(1, in: 5) ? start : randomState(source, using: &generator)
        guard let operations = start.operations(becoming: target) else {
            Issue.record("seed \(seed): \(Source.Model.self) gives no operations")
            return
        }
        var model = start
        for operation in operations {
            do { _ = try model.apply(operation) } catch {
                Issue.record("seed \(seed): \(operation) was refused: \(error)")
                return
            }
        }
        #expect(model == target, "seed \(seed): \(Source.summary(model)) is not \(Source.summary(target))")
        if start == target { #expect(operations.isEmpty, "seed \(seed): a state becomes itself with no operation") }
    }

    @Test(arguments: seeds) func textReachesItsTarget(seed: UInt64) { Self.check(TextSource.self, seed: seed) }
    @Test(arguments: seeds) func pagesReachTheirTarget(seed: UInt64) { Self.check(PagesSource.self, seed: seed) }
    @Test(arguments: seeds) func recordsReachTheirTarget(seed: UInt64) { Self.check(RecordsSource.self, seed: seed) }

    @Test func aTextChangesOnlyWhereItDiffers() throws {
        let operations = try #require(
            TextDocument(text: "The first draft.").operations(becoming: TextDocument(text: "The second draft.")))
        #expect(operations == [.delete(at: 4, count: 5), .insert(at: 4, text: "second")])
    }

    @Test func namesSpelledOtherwiseAreReplacedByTheTargetsSpelling() throws {
        let decomposed = "e\u{301}.png"
        let precomposed = "\u{E9}.png"
        var start = PagesDocument()
        _ = try start.apply(.putImage(name: decomposed, bytes: Data([1])))
        var target = PagesDocument()
        _ = try target.apply(.putImage(name: precomposed, bytes: Data([1])))
        var model = start
        for operation in try #require(start.operations(becoming: target)) { _ = try model.apply(operation) }
        #expect(model == target)
        #expect(model.images.keys.first.map { Array($0.unicodeScalars) } == Array(precomposed.unicodeScalars))
    }

    @Test func recordsKeepTheLongestRunInOrderAndMoveTheRest() throws {
        typealias Record = RecordsDocument.Record
        let start = try RecordsDocument(records: ["a", "b", "c", "d"].map { Record(id: $0) })
        let target = try RecordsDocument(records: ["b", "c", "d", "a"].map { Record(id: $0) })
        let operations = try #require(start.operations(becoming: target))
        #expect(operations == [.remove(record: "a"), .insert(record: "a", fields: [:], at: 3)])
    }
}
