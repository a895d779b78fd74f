import FolioCore
import FolioMerge
import FolioModels
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct RecordsDocumentMergeTests {
    typealias Record = RecordsDocument.Record

    static func document(_ records: [(String, [String: String])]) throws -> RecordsDocument {
        try RecordsDocument(records: records.map { Record(id: $0.0, fields: $0.1) })
    }

    static func base() throws -> RecordsDocument {
        try document([("r1", ["name": "Ann", "city": "Oslo"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"])])
    }

    @Test func fieldsOfOneRecordMergeFieldByField() throws {
        let mine = try Self.document([
            ("r1", ["name": "Anne", "city": "Oslo"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
        ])
        let theirs = try Self.document([
            ("r1", ["name": "Ann", "city": "Bergen", "age": "40"]), ("r2", ["name": "Bob"]),
            ("r3", ["name": "Cy"]),
        ])
        let result = RecordsDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(result.isClean)
        #expect(
            result.merged
                == (try Self.document([
                    ("r1", ["name": "Anne", "city": "Bergen", "age": "40"]),
                    ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
                ])))
    }

    @Test func theSameFieldSetDifferentlyConflicts() throws {
        let mine = try Self.document([
            ("r1", ["name": "Anne", "city": "Oslo"]), ("r2", ["name": "Bob"]), ("r3", ["name": "C"]),
        ])
        let theirs = try Self.document([
            ("r1", ["name": "Annie", "city": "Oslo"]), ("r2", ["name": "Bob"]),
            ("r3", ["name": "Cy"]),
        ])
        let result = RecordsDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(result.conflicts == [MergeConflict(location: "r1.name", base: "Ann", values: ["Anne", "Annie"])])
        #expect(result.merged["r1"] == Record(id: "r1", fields: ["name": "Anne", "city": "Oslo"]))
        #expect(result.merged["r3"] == Record(id: "r3", fields: ["name": "C"]))
    }

    @Test func anEditBeatsARemoval() throws {
        // One version removes r1 and r2; the other edits r1 and leaves r2 alone.
        let mine = try Self.document([("r3", ["name": "Cy"])])
        let theirs = try Self.document([
            ("r1", ["name": "Ann", "city": "Rome"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
        ])
        for versions in [[mine, theirs], [theirs, mine]] {
            let result = RecordsDocument.merge(base: try Self.base(), versions: versions)
            #expect(result.isClean)
            #expect(
                result.merged
                    == (try Self.document([("r1", ["name": "Ann", "city": "Rome"]), ("r3", ["name": "Cy"])])))
        }

        // A field edited in one version and unset in the other keeps the edit.
        let unset = try Self.document([("r1", ["name": "Ann"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"])])
        let edited = try Self.document([
            ("r1", ["name": "Ann", "city": "Rome"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
        ])
        #expect(
            RecordsDocument.merge(base: try Self.base(), versions: [unset, edited]).merged["r1"]?["city"] == "Rome")
    }

    @Test func conflictsOfARecordSomeRemovedNameTheRemoval() throws {
        let removed = try Self.document([("r2", ["name": "Bob"]), ("r3", ["name": "Cy"])])
        let mine = try Self.document([
            ("r1", ["name": "A.", "city": "Oslo"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
        ])
        let theirs = try Self.document([
            ("r1", ["name": "An", "city": "Oslo"]), ("r2", ["name": "Bob"]), ("r3", ["name": "Cy"]),
        ])
        let result = RecordsDocument.merge(base: try Self.base(), versions: [removed, mine, theirs])
        #expect(result.conflicts == [MergeConflict(location: "r1.name", base: "Ann", values: [nil, "A.", "An"])])
        #expect(result.merged["r1"]?["name"] == "A.")
    }

    @Test func addedRecordsFollowTheAncestorsInVersionOrder() throws {
        let base = try Self.base()
        let mine = try Self.document([
            ("m1", ["x": "1"]), ("r1", ["name": "Ann", "city": "Oslo"]), ("r2", ["name": "Bob"]),
            ("r3", ["name": "Cy"]), ("both", ["x": "1"]), ("m2", [:]),
        ])
        let theirs = try Self.document([
            ("t1", [:]), ("both", ["x": "1", "y": "2"]), ("r1", ["name": "Ann", "city": "Oslo"]),
            ("r3", ["name": "Cy"]),
        ])
        let result = RecordsDocument.merge(base: base, versions: [mine, theirs])
        #expect(result.isClean)
        #expect(result.merged.ids == ["r1", "r3", "m1", "both", "m2", "t1"])
        #expect(result.merged["both"] == Record(id: "both", fields: ["x": "1", "y": "2"]))
        result.merged._checkInvariants()
    }

    @Test func recordsAddedTwiceMergeTheirFields() throws {
        let mine = try Self.document([("new", ["name": "Dee", "tag": "a"])])
        let theirs = try Self.document([("new", ["name": "Di", "tag": "a"])])
        let result = RecordsDocument.merge(base: RecordsDocument(), versions: [mine, theirs])
        #expect(result.conflicts == [MergeConflict(location: "new.name", base: nil, values: ["Dee", "Di"])])
        #expect(result.merged == mine)
    }

    @Test func removedOnEitherSideAndUntouchedElsewhereIsRemoved() throws {
        let mine = try Self.document([("r1", ["name": "Ann", "city": "Oslo"]), ("r3", ["name": "Cy"])])
        let theirs = try Self.document([("r1", ["name": "Ann", "city": "Oslo"]), ("r2", ["name": "Bob"])])
        let result = RecordsDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(result.isClean)
        #expect(result.merged.ids == ["r1"])
    }

    @Test func valuesCompareByScalars() throws {
        let base = try Self.document([("r1", ["name": "é"])])
        let respelled = try Self.document([("r1", ["name": "e\u{301}"])])
        let result = RecordsDocument.merge(
            base: base, versions: [respelled, try Self.document([("r1", ["name": "E"])])])
        #expect(result.conflicts.map(\.location) == ["r1.name"])
    }

    @Test func differenceListsRecordsInDocumentOrder() throws {
        let version = try Self.document([
            ("r3", ["name": "Cy", "age": "7"]), ("r1", ["name": "Ann"]), ("new", ["b": "2", "a": "1"]),
        ])
        let difference = version.difference(from: try Self.base())
        #expect(difference.records.map(\.kind) == [.edited, .removed, .edited, .added])
        #expect(
            difference.summary == [
                #"edited r1: city "Oslo" → ∅"#,
                #"removed r2 {name: "Bob"}"#,
                #"edited r3: age ∅ → "7""#,
                #"added new {a: "1", b: "2"}"#,
            ])
        #expect((try Self.base()).difference(from: try Self.base()).description == "no changes")
    }
}
