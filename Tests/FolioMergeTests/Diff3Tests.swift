import FolioCore
import FolioMerge
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct Diff3Tests {
    static let base = "a\nb\nc\nd\ne\n"

    @Test func separateEditsMerge() {
        let result = Diff3.merge(base: Self.base, versions: ["a\nB\nc\nd\ne\n", "a\nb\nc\nD\ne\n"])
        #expect(result.isClean)
        #expect(result.text == "a\nB\nc\nD\ne\n")
    }

    @Test func theSameEditIsTakenOnce() {
        let result = Diff3.merge(base: Self.base, versions: ["a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\nf\n"])
        #expect(result.isClean)
        #expect(result.text == "a\nB\nc\nd\ne\nf\n")
    }

    @Test func differentEditsOfALineConflict() throws {
        let result = Diff3.merge(base: Self.base, versions: ["a\nX\nc\nd\nE\n", "a\nY\nc\nd\ne\n"])
        #expect(result.text == "a\nX\nc\nd\nE\n", "the first version's lines stand, the clean edit is merged")
        let conflict = try #require(result.conflicts.first)
        #expect(result.conflicts.count == 1)
        #expect(conflict.baseLines == 1..<2 && conflict.mergedLines == 1..<2)
        #expect(conflict.location == "line 2")
        #expect(conflict.base == ["b\n"] && conflict.values == [["X\n"], ["Y\n"]])
        #expect(conflict.mergeConflict() == MergeConflict(location: "line 2", base: "b\n", values: ["X\n", "Y\n"]))
        #expect(conflict.mergeConflict(locationPrefix: "text.txt, ").location == "text.txt, line 2")
    }

    @Test func overlappingRangesConflictAsOneRegion() throws {
        let result = Diff3.merge(base: Self.base, versions: ["a\nB\nC\nd\ne\n", "a\nb\nCC\nDD\ne\n"])
        let conflict = try #require(result.conflicts.first)
        #expect(result.conflicts.count == 1)
        #expect(conflict.location == "lines 2–4")
        #expect(conflict.values == [["B\n", "C\n", "d\n"], ["b\n", "CC\n", "DD\n"]])
        #expect(result.text == "a\nB\nC\nd\ne\n")
    }

    @Test func adjacentEditsConflict() {
        // As in diff3 and git: no unchanged line separates the two edits, so neither saw the other's context.
        let result = Diff3.merge(base: Self.base, versions: ["a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n"])
        #expect(result.conflicts.map(\.location) == ["lines 2–3"])
        #expect(result.text == "a\nB\nc\nd\ne\n")
    }

    @Test func insertionsAtOnePlace() {
        let same = Diff3.merge(base: Self.base, versions: ["a\nb\nnew\nc\nd\ne\n", "a\nb\nnew\nc\nd\ne\n"])
        #expect(same.isClean && same.text == "a\nb\nnew\nc\nd\ne\n")

        let different = Diff3.merge(base: Self.base, versions: ["a\nb\none\nc\nd\ne\n", "a\nb\ntwo\nc\nd\ne\n"])
        #expect(different.text == "a\nb\none\nc\nd\ne\n")
        #expect(
            different.conflicts.map { $0.mergeConflict() }
                == [MergeConflict(location: "after line 2", base: nil, values: ["one\n", "two\n"])])
        #expect(different.conflicts.first?.mergedLines == 2..<3)

        let apart = Diff3.merge(base: Self.base, versions: ["top\na\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nend\n"])
        #expect(apart.isClean && apart.text == "top\na\nb\nc\nd\ne\nend\n")
    }

    @Test func deletions() {
        let separate = Diff3.merge(base: Self.base, versions: ["a\nc\nd\ne\n", "a\nb\nc\nD\ne\n"])
        #expect(separate.isClean && separate.text == "a\nc\nD\ne\n")

        let both = Diff3.merge(base: Self.base, versions: ["a\nc\nd\ne\n", "a\nc\nd\ne\n"])
        #expect(both.isClean && both.text == "a\nc\nd\ne\n")

        let everything = Diff3.merge(base: Self.base, versions: ["", Self.base])
        #expect(everything.isClean && everything.text == "")

        let deletedAndEdited = Diff3.merge(base: Self.base, versions: ["a\nc\nd\ne\n", "a\nB\nc\nd\ne\n"])
        #expect(deletedAndEdited.text == "a\nc\nd\ne\n")
        #expect(
            deletedAndEdited.conflicts.map { $0.mergeConflict() }
                == [MergeConflict(location: "line 2", base: "b\n", values: [nil, "B\n"])])
        #expect(deletedAndEdited.conflicts.first?.mergedLines == 1..<1)
    }

    @Test func emptyBase() {
        let one = Diff3.merge(base: "", versions: ["", "new\ntext"])
        #expect(one.isClean && one.text == "new\ntext")

        let both = Diff3.merge(base: "", versions: ["mine\n", "theirs\n"])
        #expect(both.text == "mine\n")
        #expect(
            both.conflicts.map { $0.mergeConflict() }
                == [MergeConflict(location: "at the start", base: nil, values: ["mine\n", "theirs\n"])])

        #expect(Diff3.merge(base: "", versions: ["", ""]).text == "")
    }

    @Test func aLastLineWithoutNewlineRoundTrips() {
        let base = "a\nb\nc"
        let result = Diff3.merge(base: base, versions: ["A\nb\nc", "a\nb\nC"])
        #expect(result.isClean && same(result.text, "A\nb\nC"))

        let untouched = Diff3.merge(base: base, versions: ["A\nb\nc", "a\nb\nc"])
        #expect(untouched.isClean && same(untouched.text, "A\nb\nc"))

        // Ending the last line is a change to that line.
        let ended = Diff3.merge(base: base, versions: ["A\nb\nc", "a\nb\nc\n"])
        #expect(ended.isClean && same(ended.text, "A\nb\nc\n"))

        let clash = Diff3.merge(base: base, versions: ["a\nb\nc\n", "a\nb\nc!"])
        #expect(same(clash.text, "a\nb\nc\n"))
        #expect(
            clash.conflicts.map { $0.mergeConflict() }
                == [MergeConflict(location: "line 3", base: "c", values: ["c\n", "c!"])])
    }

    @Test func linesKeepTheirExactScalarsAndTerminators() {
        let base = "x\r\nmiddle\né\nz\r\n"
        let result = Diff3.merge(base: base, versions: ["X\r\nmiddle\né\nz\r\n", "x\r\nmiddle\ne\u{301}\nz\r\n"])
        #expect(result.isClean)
        #expect(same(result.text, "X\r\nmiddle\ne\u{301}\nz\r\n"))
        // A respelled line is a change: it conflicts with another change of that line.
        let respelled = Diff3.merge(base: base, versions: ["x\r\nmiddle\ne\u{301}\nz\r\n", "x\r\nmiddle\nE\nz\r\n"])
        #expect(respelled.conflicts.map(\.location) == ["line 3"])
    }

    @Test func threeVersions() throws {
        let clean = Diff3.merge(base: Self.base, versions: ["A\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n", "a\nb\nc\nd\nE\n"])
        #expect(clean.isClean && clean.text == "A\nb\nC\nd\nE\n")

        let agreed = Diff3.merge(base: Self.base, versions: ["a\nB\nc\nd\ne\n", Self.base, "a\nB\nc\nd\ne\n"])
        #expect(agreed.isClean && agreed.text == "a\nB\nc\nd\ne\n")

        // The first version left line 3 alone; the other two disagree. The first version's (unchanged) line stands.
        let result = Diff3.merge(base: Self.base, versions: ["A\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\n", "a\nb\nY\nd\ne\n"])
        #expect(result.text == "A\nb\nc\nd\ne\n")
        let conflict = try #require(result.conflicts.first)
        #expect(result.conflicts.count == 1)
        #expect(
            conflict.mergeConflict() == MergeConflict(location: "line 3", base: "c\n", values: ["c\n", "X\n", "Y\n"]))
    }

    @Test func conflictsListEveryRegionInOrder() {
        let result = Diff3.merge(base: Self.base, versions: ["1\nb\nc\nd\n5\n", "one\nb\nc\nd\nfive\n"])
        #expect(result.conflicts.map(\.location) == ["line 1", "line 5"])
        #expect(result.conflicts.map(\.mergedLines) == [0..<1, 4..<5])
        #expect(result.text == "1\nb\nc\nd\n5\n")
    }

    /// The merge of 10,000 lines with about 200 scattered edits per side: correct, and quick even in debug builds.
    @Test func longTextsMerge() {
        let base = (0..<10_000).map { "line \($0)\n" }
        var mine = base
        var theirs = base
        for index in stride(from: 10, to: 10_000, by: 50) { mine[index] = "mine \(index)\n" }
        for index in stride(from: 35, to: 10_000, by: 50) { theirs[index] = "theirs \(index)\n" }
        mine.insert("inserted\n", at: 5_000)
        theirs.removeSubrange(7_001...7_003)
        var expected = base
        for index in stride(from: 10, to: 10_000, by: 50) { expected[index] = "mine \(index)\n" }
        for index in stride(from: 35, to: 10_000, by: 50) { expected[index] = "theirs \(index)\n" }
        expected.removeSubrange(7_001...7_003)
        expected.insert("inserted\n", at: 5_000)
        let result = Diff3.merge(baseLines: base, versionLines: [mine, theirs])
        #expect(result.isClean)
        #expect(same(result.lines, expected))
    }
}
