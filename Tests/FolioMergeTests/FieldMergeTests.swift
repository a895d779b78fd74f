import FolioMerge
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct FieldMergeTests {
    /// One key's ancestor value, two versions' values, and what the merge must make of them.
    struct Row: Sendable, CustomTestStringConvertible {
        var base: String?
        var first: String?
        var second: String?
        var merged: String?
        var conflicts: Bool

        init(_ base: String?, _ first: String?, _ second: String?, _ merged: String?, conflict: Bool = false) {
            self.base = base
            self.first = first
            self.second = second
            self.merged = merged
            self.conflicts = conflict
        }

        var testDescription: String {
            "\(base ?? "∅") → \(first ?? "∅") | \(second ?? "∅") ⇒ \(merged ?? "∅")\(conflicts ? " (conflict)" : "")"
        }
    }

    static let rows: [Row] = [
        Row("a", "a", "a", "a"),  // untouched
        Row("a", "b", "a", "b"),  // changed on one side
        Row("a", "a", "b", "b"),
        Row("a", "b", "b", "b"),  // the same change on both
        Row("a", "b", "c", "b", conflict: true),
        Row("a", nil, "a", nil),  // removed on one side
        Row("a", "a", nil, nil),
        Row("a", nil, nil, nil),  // removed on both
        Row("a", "b", nil, "b"),  // edit beats remove
        Row("a", nil, "c", "c"),
        Row(nil, "b", nil, "b"),  // added on one side
        Row(nil, nil, "c", "c"),
        Row(nil, "b", "b", "b"),  // the same addition
        Row(nil, "b", "c", "b", conflict: true),
    ]

    static func map(_ value: String?) -> [String: String] { value.map { ["k": $0] } ?? [:] }

    @Test(arguments: rows) func oneKey(_ row: Row) {
        let result = FieldMerge.merge(base: Self.map(row.base), versions: [Self.map(row.first), Self.map(row.second)])
        #expect(result.merged == Self.map(row.merged))
        if row.conflicts {
            #expect(
                result.conflicts == [FieldMerge.Conflict(key: "k", base: row.base, values: [row.first, row.second])])
        } else {
            #expect(result.isClean)
        }
    }

    @Test func manyKeysConflictInKeyOrder() {
        let base = ["z": "1", "b": "1", "a": "1", "é": "1", "keep": "1"]
        let first = ["z": "2", "b": "2", "a": "2", "é": "2", "keep": "1", "new": "x"]
        let second = ["z": "3", "b": "3", "a": "2", "é": "3", "keep": "1"]
        let result = FieldMerge.merge(base: base, versions: [first, second])
        #expect(result.conflicts.map(\.key) == ["b", "z", "é"])
        #expect(result.merged == ["z": "2", "b": "2", "a": "2", "é": "2", "keep": "1", "new": "x"])
    }

    @Test func threeVersions() {
        // The first version removed the key, the others edited it differently: the first edit stands.
        let conflicting = FieldMerge.merge(base: ["k": "a"], versions: [[:], ["k": "b"], ["k": "c"]])
        #expect(conflicting.merged == ["k": "b"])
        #expect(conflicting.conflicts == [FieldMerge.Conflict(key: "k", base: "a", values: [nil, "b", "c"])])

        let agreeing = FieldMerge.merge(base: ["k": "a"], versions: [[:], ["k": "b"], ["k": "b"]])
        #expect(agreeing.isClean && agreeing.merged == ["k": "b"])
    }

    @Test func theComparisonDecidesWhatChanged() {
        let base = ["k": "é"]
        let versions = [["k": "e\u{301}"], ["k": "x"]]
        // By canonical equivalence the first version changed nothing; by scalars it did.
        #expect(FieldMerge.merge(base: base, versions: versions).isClean)
        #expect(!FieldMerge.merge(base: base, versions: versions, by: { $0.utf8.elementsEqual($1.utf8) }).isClean)
    }

    @Test func changesAreSortedByKey() {
        let changes = FieldMerge.changes(from: ["b": "1", "a": "1", "c": "1"], to: ["c": "2", "a": "1", "d": "1"])
        #expect(
            changes == [
                FieldChange(key: "b", base: "1", version: nil), FieldChange(key: "c", base: "1", version: "2"),
                FieldChange(key: "d", base: nil, version: "1"),
            ])
        #expect(changes.map(\.kind) == [.removed, .changed, .added])
        #expect(FieldMerge.changes(from: ["a": 1], to: ["a": 1]).isEmpty)
    }
}
