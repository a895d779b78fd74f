import FolioMerge
import FolioTestWorkPool
import Testing

/// Which concurrent edits a character merge takes silently, and which overlap (`TextEventGraph.merge(of:)`).
@Suite(.workPool) struct TextEventGraphMergeTests {
    private func scalars(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars) }

    /// Two versions of `base`, each made of `edits` on it, merged.
    private func merge(_ base: String, _ first: [TextEdit], _ second: [TextEdit]) throws -> TextMerge {
        var graph = TextEventGraph<Int>(base: scalars(base))
        let one = try graph.add(agent: 1, parents: [], edits: first)
        let other = try graph.add(agent: 2, parents: [], edits: second)
        return try graph.merge(of: [one, other])
    }

    /// One word replaced two ways: an overlap, shown at the word, and the merged text takes the first version's
    /// word instead of both interleaved.
    @Test func oneWordReplacedTwoWaysOverlaps() throws {
        let merged = try merge(
            "oat milk\neggs\n",
            [.delete(at: 0, count: 3), .insert(at: 0, text: "soy")],
            [.delete(at: 0, count: 3), .insert(at: 0, text: "almond")])
        #expect(merged.text == "soy milk\neggs\n")
        #expect(merged.overlaps.count == 1)
        let overlap = try #require(merged.overlaps.first)
        #expect(overlap.location == "line 1, characters 1–3")
        #expect(overlap.base == "oat")
        #expect(overlap.texts == ["soy", "almond"])
        #expect(overlap.versions == [0, 1])
    }

    /// One sentence rewritten twice, as two whole replacements: an overlap on the second line.
    @Test func oneSentenceRewrittenTwiceOverlaps() throws {
        let base = "Title\nThe meeting is on Tuesday.\nEnd\n"
        let merged = try merge(
            base, [.replaceAll(with: scalars("Title\nWe meet on Monday.\nEnd\n"))],
            [.replaceAll(with: scalars("Title\nThe call moved to Friday.\nEnd\n"))])
        #expect(!merged.isClean)
        #expect(merged.text == "Title\nWe meet on Monday.\nEnd\n")
        #expect(merged.overlaps.allSatisfy { $0.start.line == 2 && $0.end.line == 2 })
    }

    /// Two stretches deleted across each other overlap, though neither typed anything.
    @Test func deletionsAcrossEachOtherOverlap() throws {
        let merged = try merge("abcdef", [.delete(at: 1, count: 2)], [.delete(at: 2, count: 2)])
        #expect(merged.overlaps.map(\.base) == ["bcd"])
        #expect(merged.overlaps.map(\.texts) == [["d", "b"]])
        #expect(merged.overlaps.first?.location == "line 1, characters 2–4")
        #expect(merged.text == "adef")
    }

    /// The same word deleted by both: the same pure deletion, merged silently.
    @Test func theSameDeletionMergesSilently() throws {
        let merged = try merge("one two three", [.delete(at: 3, count: 4)], [.delete(at: 3, count: 4)])
        #expect(merged.isClean)
        #expect(merged.text == "one three")
    }

    /// Both replace one word the same way: typed twice, so an overlap (the person keeps either).
    @Test func theSameReplacementTypedTwiceOverlaps() throws {
        let edits: [TextEdit] = [.delete(at: 0, count: 3), .insert(at: 0, text: "the")]
        let merged = try merge("teh end", edits, edits)
        #expect(merged.overlaps.map(\.texts) == [["the", "the"]])
        #expect(merged.text == "the end")
    }

    /// Typing together at one place is live co-editing, never an overlap: both runs land, one after the other.
    @Test func typingAtOnePlaceMergesSilently() throws {
        let merged = try merge("ab", [.insert(at: 1, text: "xx")], [.insert(at: 1, text: "yy")])
        #expect(merged.isClean)
        #expect(merged.text == "axxyyb")
    }

    /// Typing inside a stretch the other version deleted, or next to it, is not an overlap: only deleting the same
    /// scalars is.
    @Test func typingWhereTheOtherDeletedMergesSilently() throws {
        let inside = try merge("keep\nold paragraph\nend\n", [.delete(at: 5, count: 14)], [.insert(at: 9, text: "new")])
        #expect(inside.isClean)
        #expect(inside.text == "keep\nnewend\n")
        let beside = try merge("abc", [.delete(at: 1, count: 1)], [.insert(at: 1, text: "X")])
        #expect(beside.isClean)
        #expect(beside.text == "aXc")
    }

    /// Edits of one line at different scalars merge silently: a word fixed at its start, words added at its end.
    @Test func editsOfOneLineAtDifferentScalarsMergeSilently() throws {
        let merged = try merge(
            "teh meeting is on Tuesday\n", [.delete(at: 0, count: 3), .insert(at: 0, text: "The")],
            [.insert(at: 25, text: " at 10:00")])
        #expect(merged.isClean)
        #expect(merged.text == "The meeting is on Tuesday at 10:00\n")
    }

    /// A version that descends from the other never overlaps with it.
    @Test func aVersionAndItsAncestorDoNotOverlap() throws {
        var graph = TextEventGraph<Int>(base: scalars("abc"))
        let first = try graph.add(agent: 1, parents: [], edits: [.delete(at: 0, count: 2)])
        let second = try graph.add(agent: 1, parents: [first], edits: [.delete(at: 0, count: 1)])
        #expect(try graph.merge(of: [first, second]) == TextMerge(text: "", overlaps: []))
    }

    /// Three versions: only the pair that deleted the same scalars overlaps, and every version's text of the
    /// stretch is given.
    @Test func threeVersionsOverlapByPairs() throws {
        var graph = TextEventGraph<Int>(base: scalars("red green blue"))
        let one = try graph.add(agent: 1, parents: [], edits: [.delete(at: 0, count: 3), .insert(at: 0, text: "pink")])
        let two = try graph.add(agent: 2, parents: [], edits: [.insert(at: 14, text: "!")])
        let three = try graph.add(agent: 3, parents: [], edits: [.delete(at: 0, count: 4)])
        let merged = try graph.merge(of: [one, two, three])
        #expect(merged.overlaps.map(\.versions) == [[0, 2]])
        #expect(merged.overlaps.first?.texts == ["pink ", "red ", ""])
        #expect(merged.text == "pink green blue!")
    }
}
