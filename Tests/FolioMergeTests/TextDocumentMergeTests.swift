import FolioCore
import FolioMerge
import FolioModels
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct TextDocumentMergeTests {
    static let base = TextDocument(text: "title\nbody\nend")

    @Test func separateEditsMerge() {
        let result = TextDocument.merge(
            base: Self.base,
            versions: [TextDocument(text: "Title\nbody\nend"), TextDocument(text: "title\nbody\nThe end")])
        #expect(result.isClean)
        #expect(result.merged == TextDocument(text: "Title\nbody\nThe end"))
    }

    @Test func aConflictKeepsTheFirstVersionsLines() {
        let result = TextDocument.merge(
            base: Self.base,
            versions: [TextDocument(text: "title\nmine\nend"), TextDocument(text: "title\ntheirs\nend")])
        #expect(result.merged == TextDocument(text: "title\nmine\nend"))
        #expect(
            result.conflicts == [MergeConflict(location: "line 2", base: "body\n", values: ["mine\n", "theirs\n"])])
    }

    @Test func differenceListsLineChanges() {
        let version = TextDocument(text: "title\nbody\nmore\nend!")
        let difference = version.difference(from: Self.base)
        #expect(difference.summary == ["replaced line 3 with 2 lines"])
        #expect(difference.applied(to: Self.base.text) == version.text)
        #expect(Self.base.difference(from: Self.base).isEmpty)
    }
}
