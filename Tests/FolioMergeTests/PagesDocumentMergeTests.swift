import FolioCore
import FolioMerge
import FolioModels
import FolioTestWorkPool
import Foundation
import Testing

@Suite(.workPool) struct PagesDocumentMergeTests {
    static let cover = Data([1, 2, 3])

    static func base() throws -> PagesDocument {
        try PagesDocument(text: "Chapter 1\nIt was dark.\n", images: ["cover.png": cover, "map.png": Data([9])])
    }

    @Test func textAndImagesMergeMemberByMember() throws {
        let mine = try PagesDocument(
            text: "Chapter One\nIt was dark.\n",
            images: ["cover.png": Data([4]), "map.png": Data([9]), "new.png": Data([5])])
        let theirs = try PagesDocument(
            text: "Chapter 1\nIt was dark.\nAnd stormy.\n", images: ["cover.png": Self.cover])
        let result = PagesDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(result.isClean)
        #expect(
            result.merged
                == (try PagesDocument(
                    text: "Chapter One\nIt was dark.\nAnd stormy.\n",
                    images: ["cover.png": Data([4]), "new.png": Data([5])])))
    }

    @Test func conflictsNameTheMemberAndDescribeImages() throws {
        let mine = try PagesDocument(
            text: "Chapter A\nIt was dark.\n",
            images: ["cover.png": Data([4]), "map.png": Data([9])])
        let theirs = try PagesDocument(
            text: "Chapter B\nIt was dark.\n",
            images: ["cover.png": Data([5, 5]), "map.png": Data([9])])
        let result = PagesDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(result.merged == mine)
        #expect(result.conflicts.map(\.location) == ["text.txt, line 1", "images/cover.png"])
        #expect(result.conflicts[0].values == ["Chapter A\n", "Chapter B\n"])
        let image = result.conflicts[1]
        #expect(image.base == PagesDocument.imageSummary(Self.cover))
        #expect(image.values == [PagesDocument.imageSummary(Data([4])), PagesDocument.imageSummary(Data([5, 5]))])
        #expect(image.base?.hasPrefix("3 bytes, sha256 039058c6f2c0") == true)
    }

    @Test func aReplacedImageBeatsItsRemoval() throws {
        let removed = try PagesDocument(text: "Chapter 1\nIt was dark.\n", images: ["map.png": Data([9])])
        let replaced = try PagesDocument(
            text: "Chapter 1\nIt was dark.\n",
            images: ["cover.png": Data([7]), "map.png": Data([9])])
        for versions in [[removed, replaced], [replaced, removed]] {
            let result = PagesDocument.merge(base: try Self.base(), versions: versions)
            #expect(result.isClean)
            #expect(result.merged.images == ["cover.png": Data([7]), "map.png": Data([9])])
        }
    }

    @Test func theMergeSavesAndLoads() throws {
        let mine = try PagesDocument(text: "Chapter A\nIt was dark.\n", images: ["b.png": Data([1])])
        let theirs = try PagesDocument(text: "Chapter 1\nIt was dark", images: ["a.png": Data([2])])
        let result = PagesDocument.merge(base: try Self.base(), versions: [mine, theirs])
        #expect(try PagesDocument(contents: result.merged.contents()) == result.merged)
    }

    @Test func differenceListsTextThenImages() throws {
        let version = try PagesDocument(
            text: "Chapter 1\nIt was dark.\nThe end.\n",
            images: ["cover.png": Data([4]), "z.png": Data()])
        let difference = version.difference(from: try Self.base())
        #expect(
            difference.summary == [
                "text.txt: inserted 1 line after line 2",
                "images/cover.png: replaced \(PagesDocument.imageSummary(Self.cover)) with \(PagesDocument.imageSummary(Data([4])))",
                "images/map.png: removed (was \(PagesDocument.imageSummary(Data([9]))))",
                "images/z.png: added (\(PagesDocument.imageSummary(Data())))",
            ])
        #expect((try Self.base()).difference(from: try Self.base()).isEmpty)
    }
}
