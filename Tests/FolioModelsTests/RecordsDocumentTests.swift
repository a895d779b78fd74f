import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Random records operations over a small pool of ids and field names (including two spellings of `é`), so adds
/// collide, sets hit existing and new fields, and removes hit and miss.
enum RecordsSource: OperationSource {
    typealias Operation = RecordsDocument.Operation

    static let ids = ["r1", "r2", "r3", "r4", "r5", "", "é", "e\u{301}", "a\"b\\c"]
    static let names = ["name", "age", "city", "", "é", "e\u{301}", "line\nbreak"]
    static let values = ["Ann", "Bob", "", "42", "Zoë", "tab\there", "👍🏽", "\u{1}", "quote\"d"]

    static func fields(using generator: inout SplitMix64) -> [String: String] {
        var fields: [String: String] = [:]
        for _ in 0..<generator.int(in: 0...3) { fields[generator.pick(names)] = generator.pick(values) }
        return fields
    }

    static func operation(for model: RecordsDocument, using generator: inout SplitMix64) -> Operation {
        let id = model.records.isEmpty || generator.chance(1, in: 3) ? generator.pick(ids) : generator.pick(model.ids)
        switch generator.int(in: 0...9) {
        case 0, 1, 2: return .add(record: generator.pick(ids), fields: fields(using: &generator))
        case 3, 4, 5: return .set(record: id, field: generator.pick(names), value: generator.pick(values))
        case 6: return .remove(record: id)
        case 7:
            let position =
                generator.chance(1, in: 6)
                ? generator.pick([-1, model.records.count + 1, Int.max])
                : generator.int(in: 0...model.records.count)
            return .insert(record: generator.pick(ids), fields: fields(using: &generator), at: position)
        case 8:
            let name =
                model[id].flatMap { $0.fields.isEmpty ? nil : generator.pick($0.fieldNames) } ?? generator.pick(names)
            return .unset(record: id, field: name)
        default: return .remove(record: generator.pick(ids))
        }
    }

    static func follower(of previous: Operation, in model: RecordsDocument, using generator: inout SplitMix64)
        -> Operation
    {
        switch previous {
        case .add(let record, _), .insert(let record, _, _), .set(let record, _, _):
            var field = generator.pick(names)
            if case .set(_, let previousField, _) = previous, generator.chance(2, in: 3) { field = previousField }
            return .set(record: record, field: field, value: generator.pick(values))
        default:
            return operation(for: model, using: &generator)
        }
    }

    static func checkInvariants(_ model: RecordsDocument) {
        model._checkInvariants()
    }

    static func summary(_ model: RecordsDocument) -> String {
        "[" + model.records.map(\.description).joined(separator: "; ") + "]"
    }
}

@Suite(.workPool) struct RecordsDocumentTests {
    typealias Operation = RecordsDocument.Operation
    typealias Record = RecordsDocument.Record

    static func sample() throws -> RecordsDocument {
        try RecordsDocument(records: [
            Record(id: "r1", fields: ["name": "Ann", "city": "Oslo"]),
            Record(id: "r2", fields: ["name": "Bob"]),
        ])
    }

    @Test func typeIsAFlatJSONFile() {
        let type = RecordsDocument.documentType
        #expect(type.identifier == "com.folio.records")
        #expect(type.conforms(to: "public.json"))
        #expect(type.fileExtensions == ["folio-records"])
        #expect(!type.isPackage)
    }

    @Test func addAppendsAndIsUndoneByRemove() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.add(record: "r0", fields: ["name": "Cy"]))
        #expect(document.ids == ["r1", "r2", "r0"])
        #expect(document["r0"] == Record(id: "r0", fields: ["name": "Cy"]))
        #expect(inverse == .remove(record: "r0"))
        _ = try document.apply(inverse)
        #expect(document == (try Self.sample()))
    }

    @Test func addingAnExistingIdIsRefused() throws {
        var document = try Self.sample()
        #expect(throws: ModelError(.invalidOperation, "a record with id \"r2\" already exists")) {
            try document.apply(.add(record: "r2", fields: [:]))
        }
        #expect(document == (try Self.sample()))
    }

    @Test func setChangesAFieldAndIsUndoneBySetOfTheOldValue() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.set(record: "r1", field: "name", value: "Anne"))
        #expect(document["r1"]?["name"] == "Anne")
        #expect(inverse == .set(record: "r1", field: "name", value: "Ann"))
    }

    @Test func setOfANewFieldIsUndoneByUnset() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.set(record: "r2", field: "age", value: "40"))
        #expect(document["r2"]?.fields == ["name": "Bob", "age": "40"])
        #expect(inverse == .unset(record: "r2", field: "age"))
        #expect(try document.apply(inverse) == .set(record: "r2", field: "age", value: "40"))
        #expect(document == (try Self.sample()))
    }

    @Test func removeIsUndoneByInsertAtTheOldPlace() throws {
        var document = try Self.sample()
        let inverse = try document.apply(.remove(record: "r1"))
        #expect(document.ids == ["r2"])
        #expect(document["r1"] == nil)
        #expect(inverse == .insert(record: "r1", fields: ["name": "Ann", "city": "Oslo"], at: 0))
        _ = try document.apply(inverse)
        #expect(document == (try Self.sample()))
    }

    @Test(arguments: [
        Operation.set(record: "r9", field: "name", value: "x"), .remove(record: "r9"),
        .unset(record: "r9", field: "name"),
        .unset(record: "r2", field: "city"), .add(record: "r1", fields: [:]), .insert(record: "r2", fields: [:], at: 0),
        .insert(record: "r3", fields: [:], at: 3), .insert(record: "r3", fields: [:], at: -1),
    ])
    func invalidOperationsAreRefusedAndChangeNothing(operation: Operation) throws {
        var document = try Self.sample()
        do {
            _ = try document.apply(operation)
            Issue.record("\(operation) applied")
        } catch let error as ModelError {
            #expect(error.code == .invalidOperation)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
        #expect(document == (try Self.sample()))
        document._checkInvariants()
    }

    @Test func duplicateIdsAreRefusedWhenBuilding() {
        #expect(throws: ModelError.self) {
            try RecordsDocument(records: [Record(id: "a"), Record(id: "a")])
        }
    }

    @Test func equivalentSpellingsNameTheSameFieldAndKeepTheFirstSpelling() throws {
        var document = RecordsDocument()
        _ = try document.apply(.add(record: "r", fields: ["é": "1"]))
        let inverse = try document.apply(.set(record: "r", field: "e\u{301}", value: "2"))
        #expect(document["r"]?.fields.count == 1)
        #expect(document["r"]?.fieldNames.first?.unicodeScalars.count == 1)
        #expect(inverse == .set(record: "r", field: "é", value: "1"))
        #expect(Operation.set(record: "r", field: "é", value: "1") != .set(record: "r", field: "e\u{301}", value: "1"))
    }

    // MARK: Snapshots

    @Test func contentsAreSortedCompactJSONWithANewline() throws {
        let json =
            #"{"records":[{"fields":{"city":"Oslo","name":"Ann"},"id":"r1"},{"fields":{"name":"Bob"},"id":"r2"}]}"#
        #expect(try Self.sample().contents() == .data(Data((json + "\n").utf8)))
        #expect(RecordsDocument().contents() == .data(Data("{\"records\":[]}\n".utf8)))
    }

    @Test func stringsAreEscaped() throws {
        let document = try RecordsDocument(records: [Record(id: "q\"/\\", fields: ["n\u{1}\t\n": "👍🏽é"])])
        let expected = #"{"records":[{"fields":{"n\u0001\t\n":"👍🏽é"},"id":"q\"/\\"}]}"# + "\n"
        #expect(document.contents() == .data(Data(expected.utf8)))
        #expect(try RecordsDocument(contents: document.contents()) == document)
    }

    @Test func contentsDoNotDependOnTheOrderFieldsWereSet() throws {
        let names = (0..<40).map { "field\($0)" }
        var forward = RecordsDocument()
        var backward = RecordsDocument()
        _ = try forward.apply(.add(record: "r", fields: [:]))
        _ = try backward.apply(.add(record: "r", fields: [:]))
        for name in names { _ = try forward.apply(.set(record: "r", field: name, value: name)) }
        for name in names.reversed() { _ = try backward.apply(.set(record: "r", field: name, value: name)) }
        #expect(forward == backward)
        #expect(forward.contents() == backward.contents())
    }

    @Test func loadingAcceptsWhitespaceAndEscapes() throws {
        let json = """
            { "records" : [ { "id" : "r1", "fields" : { "name" : "Ann\\u00e9\\ud83d\\udc4d\\/" } } ] }
            """
        let document = try RecordsDocument(contents: .data(Data(json.utf8)))
        #expect(document["r1"]?["name"] == "Anné👍/")
    }

    @Test(arguments: [
        "", "[]", "{}", #"{"records":{}}"#, #"{"records":[],"extra":1}"#, #"{"records":[{"id":"r1"}]}"#,
        #"{"records":[{"id":"r1","fields":{},"x":""}]}"#, #"{"records":[{"id":1,"fields":{}}]}"#,
        #"{"records":[{"id":"r1","fields":{"a":1}}]}"#, #"{"records":[{"id":"r1","fields":{"a":null}}]}"#,
        #"{"records":[{"id":"r1","fields":{"a":"b","a":"c"}}]}"#,
        #"{"records":[{"id":"r1","fields":{}},{"id":"r1","fields":{}}]}"#, #"{"records":[]} x"#,
        #"{"records":[{"id":"\ud800","fields":{}}]}"#, #"{"records":[{"id":"a\u0000","fields":{"x":"1.5"}},]}"#,
        "{\"records\":[{\"id\":\"a\nb\",\"fields\":{}}]}", #"{"records":[]"#, #"{"records":[1.5]}"#,
        String(repeating: "[", count: 10_000),
    ])
    func malformedContentsAreRefused(json: String) {
        do {
            let document = try RecordsDocument(contents: .data(Data(json.utf8)))
            Issue.record("\(json.prefix(80)) loaded as \(document.records)")
        } catch let error as ModelError {
            #expect(error.code == .invalidContents)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("threw \(error), not ModelError")
        }
    }

    @Test func invalidUTF8AndPackagesAreRefused() throws {
        #expect(throws: ModelError.self) { try RecordsDocument(contents: .data(Data([0x7B, 0xFF, 0x7D]))) }
        let package = try FilePackage(files: ["records.json": Data("{\"records\":[]}".utf8)])
        #expect(throws: ModelError.self) { try RecordsDocument(contents: .package(package)) }
    }

    // MARK: Encoding

    @Test(arguments: [
        Operation.add(record: "r1", fields: ["name": "Ann", "age": "3", "é": "x"]), .add(record: "", fields: [:]),
        .set(record: "r1", field: "name", value: "👍🏽"), .remove(record: "r1"),
        .insert(record: "r1", fields: ["a": "b"], at: 7), .insert(record: "r1", fields: [:], at: -1),
        .unset(record: "r1", field: "e\u{301}"),
    ])
    func operationsRoundTrip(operation: Operation) throws {
        #expect(try Operation.decodeGroup(Operation.encodeGroup([operation])) == [operation])
    }

    @Test func fieldsOutOfOrderOrRepeatedAreNotCanonical() {
        // add "r" with fields b=1, a=2 (out of order)
        let unordered = Data([1, 0, 1, 0x72, 2, 1, 0x62, 1, 0x31, 1, 0x61, 1, 0x32])
        // add "r" with fields "é" (NFC) and "e\u{301}" (NFD): in byte order, but one dictionary key
        let equivalent = Data([1, 0, 1, 0x72, 2, 3, 0x65, 0xCC, 0x81, 0, 2, 0xC3, 0xA9, 0])
        for bytes in [unordered, equivalent] {
            do {
                _ = try Operation.decodeGroup(bytes)
                Issue.record("\(Array(bytes)) decoded")
            } catch let error as CodecError {
                #expect(error.code == .notCanonical)
            } catch {
                Issue.record("threw \(error), not CodecError")
            }
        }
    }

    // MARK: Combining

    @Test func combiningSetsAndAdds() {
        #expect(
            RecordsDocument.combine(
                .set(record: "r", field: "f", value: "1"), .set(record: "r", field: "f", value: "2"))
                == .set(record: "r", field: "f", value: "2"))
        #expect(
            RecordsDocument.combine(.add(record: "r", fields: ["a": "1"]), .set(record: "r", field: "b", value: "2"))
                == .add(record: "r", fields: ["a": "1", "b": "2"]))
        #expect(
            RecordsDocument.combine(
                .set(record: "r", field: "f", value: "1"), .set(record: "r", field: "g", value: "2")) == nil)
        #expect(RecordsDocument.combine(.add(record: "r", fields: [:]), .remove(record: "r")) == nil)
        #expect(RecordsDocument.combine(.remove(record: "r"), .add(record: "r", fields: [:])) == nil)
    }

    // MARK: Laws over random sequences

    @Test func inversesRestoreTheExactState() {
        ModelLaws<RecordsSource>.checkInverses(seed: TestSeed.make(), walks: 60, steps: 40)
    }

    @Test func combinedOperationsActLikeThePair() {
        let seed = TestSeed.make()
        let combined = ModelLaws<RecordsSource>.checkCombine(seed: seed, trials: 3000)
        #expect(combined > 300, "seed \(seed): only \(combined) of 3000 pairs combined")
    }

    @Test func operationGroupsRoundTripAndTruncationThrows() {
        ModelLaws<RecordsSource>.checkOperationCoding(seed: TestSeed.make(), groups: 400)
    }

    @Test func contentsRoundTrip() {
        ModelLaws<RecordsSource>.checkContentsRoundTrip(seed: TestSeed.make(), trials: 300, steps: 30)
    }
}
