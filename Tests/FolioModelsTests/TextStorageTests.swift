import FolioCore
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct TextStorageTests {
    @Test func startsEmpty() {
        let storage = TextStorage()
        #expect(storage.isEmpty)
        #expect(storage.string == "")
        storage._checkInvariants()
    }

    @Test func insertsAndRemovesByScalarPosition() {
        var storage = TextStorage("hello")
        #expect(storage.insert(" big", at: 5) == 4)
        #expect(storage.insert("👍🏽", at: 0) == 2)
        #expect(storage.string == "👍🏽hello big")
        #expect(storage.remove(1..<2) == "\u{1F3FD}")
        #expect(storage.string(in: 0..<3) == "👍he")
        #expect(storage[0] == "👍")
        storage._checkInvariants()
    }

    @Test func equalityAndHashIgnoreTheGap() {
        var edited = TextStorage("abcdef")
        edited.insert("X", at: 2)
        edited.remove(2..<3)
        var other = TextStorage("abcdef")
        other.insert("Y", at: 5)
        other.remove(5..<6)
        #expect(edited == other)
        #expect(edited.hashValue == other.hashValue)
        #expect(edited == TextStorage("abcdef"))
        #expect(TextStorage("é") != TextStorage("e\u{301}"))
    }

    @Test func copiesAreIndependent() {
        let original = TextStorage("abc")
        var copy = original
        copy.insert("z", at: 1)
        #expect(original.string == "abc")
        #expect(copy.string == "azbc")
    }

    @Test func asciiAndWiderTextsCompareByScalars() {
        var widened = TextStorage("abc")
        widened.insert("é", at: 1)
        widened.remove(1..<2)
        #expect(widened == TextStorage("abc"), "a widened text equals the same text kept as ASCII")
        #expect(widened.hashValue == TextStorage("abc").hashValue)
        #expect(widened.string == "abc" && widened[2] == "c")
        var ascii = TextStorage("a\u{7F}\0z")
        #expect(ascii.insert("\r\n", at: 4) == 2 && ascii.string == "a\u{7F}\0z\r\n")
        #expect(ascii.insert("日本", at: 1) == 2 && ascii.string == "a日本\u{7F}\0z\r\n")
        #expect(ascii.remove(0..<3) == "a日本" && ascii.string(in: 1..<3) == "\0z")
        widened._checkInvariants()
        ascii._checkInvariants()
    }

    /// Random edits, near and far, agree with an array of scalars at every step, through growth and shrinking;
    /// for the first `asciiSteps` steps only ASCII is inserted, so the storage starts narrow and widens later (or
    /// never).
    @Test(arguments: [0, 1_500, Int.max])
    func agreesWithAnArrayOfScalars(asciiSteps: Int) {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var storage = TextStorage()
        var reference: [Unicode.Scalar] = []
        for step in 0..<4000 {
            check.iteration = step
            let length = reference.count
            if generator.chance(3, in: 5) || length == 0 {
                let position = generator.chance(1, in: 2) ? generator.int(in: 0...length) : length
                var text = TextSource.randomText(1...(generator.chance(1, in: 50) ? 200 : 3), using: &generator)
                if step < asciiSteps { text = String(String.UnicodeScalarView(text.unicodeScalars.filter(\.isASCII))) }
                storage.insert(text, at: position)
                reference.insert(contentsOf: text.unicodeScalars, at: position)
            } else {
                let start = generator.int(in: 0...length)
                let end = generator.chance(1, in: 40) ? length : min(length, start + generator.int(in: 0...3))
                let removed = storage.remove(start..<end)
                check.expect(
                    removed.unicodeScalars.elementsEqual(reference[start..<end]), "removed \(removed.debugDescription)")
                reference.removeSubrange(start..<end)
            }
            storage._checkInvariants()
            check.expect(storage.elementsEqual(reference), "the storage differs from the reference after step \(step)")
            if check.shouldStop { break }
        }
        var expected = String.UnicodeScalarView()
        expected.append(contentsOf: reference)
        check.expect(storage.string.unicodeScalars.elementsEqual(expected), "the final strings differ")
    }
}
