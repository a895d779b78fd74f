import FolioCore
import FolioMerge
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct LineDiffTests {
    typealias Hunk = LineDiff.Hunk

    static func lines(_ text: String) -> [String] { TextLines.split(text) }

    @Test func equalTextsHaveNoHunks() {
        #expect(LineDiff.hunks(from: [], to: []).isEmpty)
        #expect(LineDiff.hunks(from: Self.lines("a\nb\nc"), to: Self.lines("a\nb\nc")).isEmpty)
    }

    @Test func insertionsDeletionsAndReplacements() {
        #expect(LineDiff.hunks(from: [], to: Self.lines("a\nb\n")) == [Hunk(base: 0..<0, version: 0..<2)])
        #expect(LineDiff.hunks(from: Self.lines("a\nb\n"), to: []) == [Hunk(base: 0..<2, version: 0..<0)])
        #expect(
            LineDiff.hunks(from: Self.lines("a\nb\nc\n"), to: Self.lines("a\nc\n"))
                == [Hunk(base: 1..<2, version: 1..<1)])
        #expect(
            LineDiff.hunks(from: Self.lines("a\nc\n"), to: Self.lines("a\nb\nc\n"))
                == [Hunk(base: 1..<1, version: 1..<2)])
        #expect(
            LineDiff.hunks(from: Self.lines("a\nb\nc\nd\n"), to: Self.lines("a\nB\nc\nD\nE\n"))
                == [Hunk(base: 1..<2, version: 1..<2), Hunk(base: 3..<4, version: 3..<5)])
    }

    @Test func linesCompareByScalarsAndTerminators() {
        // A final line that gains a newline changed; so does one respelled with a combining accent.
        #expect(
            LineDiff.hunks(from: Self.lines("a\nb"), to: Self.lines("a\nb\n")) == [Hunk(base: 1..<2, version: 1..<2)])
        #expect(LineDiff.hunks(from: ["é\n"], to: ["e\u{301}\n"]) == [Hunk(base: 0..<1, version: 0..<1)])
        #expect(LineDiff.hunks(from: ["x\r\n"], to: ["x\n"]) == [Hunk(base: 0..<1, version: 0..<1)])
    }

    @Test func textDiffDescribesChanges() {
        let diff = TextDiff(base: "a\nb\nc\nd\ne\n", version: "new\na\nB\nc\ne\n")
        #expect(diff.changes.map(\.kind) == [.inserted, .changed, .deleted])
        #expect(diff.summary == ["inserted 1 line at the start", "replaced line 2 with 1 line", "deleted line 4"])
        #expect(diff.changes[1].removed == ["b\n"] && diff.changes[1].inserted == ["B\n"])
        #expect(diff.changes[1].versionLines == 2..<3)
        #expect(diff.removedLineCount == 2 && diff.insertedLineCount == 2)
        #expect(same(diff.applied(to: "a\nb\nc\nd\ne\n"), "new\na\nB\nc\ne\n"))

        let tail = TextDiff(base: "a\nb\n", version: "a\nb\nc\nd\n")
        #expect(tail.description == "inserted 2 lines after line 2")
        let block = TextDiff(base: "a\nb\nc\nd\n", version: "a\nd\n")
        #expect(block.description == "deleted lines 2–3")
        #expect(TextDiff(base: "same", version: "same").description == "no changes")
    }

    /// Applying the diff to the base gives the version; hunks are in order with kept lines between them, the kept
    /// lines are equal, and there are as many as a longest common subsequence has (the diff is minimal).
    @Test func randomDiffsApplyAndAreMinimal() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<1_500 {
            check.iteration = iteration
            let base = RandomText.lines(14, using: &generator)
            let version =
                generator.chance(1, in: 3)
                ? RandomText.lines(14, using: &generator) : RandomText.edited(base, using: &generator)
            let hunks = LineDiff.hunks(from: base, to: version)
            var kept = 0
            var nextBase = 0
            var nextVersion = 0
            var ordered = true
            for hunk in hunks {
                ordered =
                    ordered && !(hunk.base.isEmpty && hunk.version.isEmpty)
                    && hunk.base.lowerBound - nextBase == hunk.version.lowerBound - nextVersion
                    && (nextBase == 0 && nextVersion == 0 || hunk.base.lowerBound > nextBase)
                    && hunk.base.lowerBound >= nextBase && hunk.version.lowerBound >= nextVersion
                ordered =
                    ordered
                    && same(
                        Array(base[nextBase..<hunk.base.lowerBound]),
                        Array(version[nextVersion..<hunk.version.lowerBound]))
                kept += hunk.base.lowerBound - nextBase
                nextBase = hunk.base.upperBound
                nextVersion = hunk.version.upperBound
            }
            ordered =
                ordered && base.count - nextBase == version.count - nextVersion
                && same(Array(base[nextBase...]), Array(version[nextVersion...]))
            kept += base.count - nextBase
            check.expect(ordered, "hunks \(hunks) do not line up \(base) with \(version)")
            check.expect(
                kept == RandomText.lcsLength(base, version),
                "kept \(kept) lines, the LCS has \(RandomText.lcsLength(base, version)): \(base) → \(version)")
            let diff = TextDiff(baseLines: base, versionLines: version)
            check.expect(same(diff.applied(to: base), version), "applying \(diff) to \(base) did not give \(version)")
            let textDiff = TextDiff(base: base.joined(), version: version.joined())
            check.expect(
                same(textDiff.applied(to: base.joined()), version.joined()),
                "applying \(textDiff) to \(base.joined().debugDescription) failed")
            if check.shouldStop { return }
        }
    }

    /// Long texts with a few hundred scattered changes, and texts with nothing in common.
    @Test func longTextsDiffCorrectly() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let base = (0..<10_000).map { "line \($0 % 2_500)\n" }
        var version = base
        for change in 0..<300 {
            let position = generator.int(in: 0...(version.count - 2))
            switch generator.int(in: 0...2) {
            case 0: version.insert("new \(change)\n", at: position)
            case 1: version.remove(at: position)
            default: version[position] = base[generator.int(in: 0...(base.count - 1))]
            }
        }
        let diff = TextDiff(baseLines: base, versionLines: version)
        #expect(same(diff.applied(to: base), version), "seed \(seed)")
        #expect(diff.changes.count <= 300, "seed \(seed)")

        let other = (0..<10_000).map { "other \($0)\n" }
        #expect(LineDiff.hunks(from: base, to: other) == [Hunk(base: 0..<10_000, version: 0..<10_000)])
    }
}
