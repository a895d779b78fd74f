import FolioCore
import FolioMerge
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct Diff3PropertyTests {
    /// When only one version changed the text, the merge is that version, cleanly; when both made the same change,
    /// the merge is that change.
    @Test func oneSidedChangesWin() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<1_000 {
            check.iteration = iteration
            let base = RandomText.lines(12, using: &generator).joined()
            let changed = RandomText.edited(TextLines.split(base), using: &generator).joined()
            for versions in [[base, changed], [changed, base], [changed, changed], [base, changed, base]] {
                let result = Diff3.merge(base: base, versions: versions)
                check.expect(
                    result.isClean && same(result.text, changed),
                    "\(versions.map(\.debugDescription)) from \(base.debugDescription) gave "
                        + "\(result.text.debugDescription) with \(result.conflicts)")
            }
            if check.shouldStop { return }
        }
    }

    /// Edits of line ranges kept apart by at least one untouched line all land in the merge, whichever version
    /// made them, and the merge does not depend on the order of the versions.
    @Test func separateEditsAllLand() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<500 {
            check.iteration = iteration
            // Distinct lines, so each edit has exactly one alignment.
            let base = (0..<generator.int(in: 0...30)).map { "line \($0)\n" }
            var versions = [base, base]
            var expected = base
            // Edits from the end backwards, so earlier positions stay valid in every array.
            var limit = base.count
            var edit = 0
            while limit >= 0 && generator.chance(4, in: 5) {
                let start = generator.int(in: max(0, limit - 6)...limit)
                let end = generator.int(in: start...min(limit, start + 3))
                let inserted = (0..<generator.int(in: (start == end ? 1 : 0)...3)).map { "edit \(edit).\($0)\n" }
                edit += 1
                let side = generator.int(in: 0...1)
                versions[side].replaceSubrange(start..<end, with: inserted)
                expected.replaceSubrange(start..<end, with: inserted)
                // The next edit (further up) ends before line `start - 1`, which stays untouched.
                limit = start - 1
            }
            let result = Diff3.merge(baseLines: base, versionLines: versions)
            check.expect(
                result.isClean && same(result.lines, expected),
                "merging \(versions) from \(base.count) lines gave \(result.lines) with \(result.conflicts), "
                    + "expected \(expected)")
            let swapped = Diff3.merge(baseLines: base, versionLines: versions.reversed())
            check.expect(swapped == result, "the merge depends on the order of the versions")
            if check.shouldStop { return }
        }
    }

    /// Arbitrary concurrent edits: the merge is deterministic; each conflict's first value sits in the merged lines
    /// where it says; each conflict's base is the ancestor's lines; a clean merge does not depend on version order.
    @Test func anyMergeIsConsistent() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<1_000 {
            check.iteration = iteration
            let base = RandomText.lines(14, using: &generator)
            let versions = (0..<generator.int(in: 2...3)).map { _ in RandomText.edited(base, using: &generator) }
            let result = Diff3.merge(baseLines: base, versionLines: versions)
            check.expect(
                Diff3.merge(baseLines: base, versionLines: versions) == result, "the merge is not deterministic")
            var previousEnd = -1
            for conflict in result.conflicts {
                check.expect(conflict.baseLines.lowerBound > previousEnd, "conflicts out of order: \(result.conflicts)")
                previousEnd = conflict.baseLines.upperBound
                check.expect(
                    same(Array(result.lines[conflict.mergedLines]), conflict.values[0]),
                    "conflict \(conflict) is not at \(conflict.mergedLines) of \(result.lines)")
                check.expect(
                    same(Array(base[conflict.baseLines]), conflict.base), "conflict \(conflict) misquotes the base")
                check.expect(conflict.values.count == versions.count, "conflict \(conflict) lacks values")
            }
            if result.isClean {
                let reversed = Diff3.merge(baseLines: base, versionLines: versions.reversed())
                check.expect(
                    reversed.isClean && same(reversed.lines, result.lines),
                    "a clean merge of \(versions) depends on the order of the versions")
            }
            if check.shouldStop { return }
        }
    }
}
