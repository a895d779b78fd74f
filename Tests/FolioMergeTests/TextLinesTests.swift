import FolioMerge
import Testing

@Suite struct TextLinesTests {
    @Test(arguments: [
        ("", [String]()),
        ("a", ["a"]),
        ("a\n", ["a\n"]),
        ("a\nb", ["a\n", "b"]),
        ("\n\n", ["\n", "\n"]),
        ("crlf\r\nlone\rcr\n", ["crlf\r\n", "lone\rcr\n"]),
        ("é\ne\u{301}\n👍🏽", ["é\n", "e\u{301}\n", "👍🏽"]),
    ])
    func splitKeepsTerminators(text: String, lines: [String]) {
        let split = TextLines.split(text)
        #expect(split.count == lines.count)
        #expect(zip(split, lines).allSatisfy { $0.utf8.elementsEqual($1.utf8) })
        #expect(split.joined().utf8.elementsEqual(text.utf8))
    }
}
