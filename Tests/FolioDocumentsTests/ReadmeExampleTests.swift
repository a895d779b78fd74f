import FolioTestWorkPool
import Foundation
import Testing

/// The programs README.md shows are the example files, byte for byte: each block that follows an
/// `<!-- Examples/…/main.swift -->` line must equal that file.
@Suite(.workPool) struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The README's example blocks: the file each names, and the block's text.
    static func blocks() throws -> [(file: String, text: String)] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [(String, String)] = []
        var lines = readme.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix("<!-- Examples/"), line.hasSuffix(" -->") else { continue }
            let file = String(line.dropFirst("<!-- ".count).dropLast(" -->".count))
            guard lines.popFirst() == "```swift" else {
                Issue.record("the block after \(line) is not a Swift block")
                continue
            }
            var text = ""
            while let next = lines.popFirst(), next != "```" { text += next + "\n" }
            blocks.append((file, text))
        }
        return blocks
    }

    @Test func theReadmeShowsTheExamplesVerbatim() throws {
        let blocks = try Self.blocks()
        #expect(
            blocks.map(\.file) == [
                "Examples/Notes/main.swift", "Examples/Checklist/main.swift", "Examples/LiveSync/main.swift",
                "Examples/CoEditing/main.swift",
            ])
        for block in blocks {
            let file = try String(contentsOf: Self.root.appendingPathComponent(block.file), encoding: .utf8)
            #expect(block.text == file, "README.md's copy of \(block.file) differs from the file")
        }
    }

    @Test func theFirstProgramIsTheFirstCodeInTheReadme() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let firstSwift = try #require(readme.range(of: "```swift"))
        let marker = try #require(readme.range(of: "<!-- Examples/Notes/main.swift -->"))
        #expect(marker.upperBound < firstSwift.lowerBound)
    }
}
