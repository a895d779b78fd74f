import FolioTestWorkPool
import Foundation
import Testing

@testable import FolioReports

/// Untrusted text (device, document and step names, contents) in the renderings, read as their readers read them:
/// on Unicode scalars. A backtick or a pipe followed by a combining mark is one Character but still a backtick or a
/// pipe to CommonMark, so it must not end a code span or a table cell; a `<` with a mark is still a `<` to HTML.
@Suite(.workPool) struct ReportEscapingTests {
    /// Names that hide a backtick or a pipe in a Character with a combining mark.
    static let hostileNames = [
        "a`\u{301}b", "x|\u{301}y", "``\u{301}`", "`\u{301}", "|\u{301}", "p\u{301}|\u{301}q`\u{301}``\u{301}r",
        "\\`\u{301}|\u{301}",
    ]

    /// A report in which every piece of text that comes from outside is `name`.
    func report(_ name: String) -> ConflictReport {
        let node = GraphNode(
            id: "\(name):2", hash: "0123456789ab", device: name, seq: 2, lamport: 2, kind: "edit",
            parents: ["\(name):1"], time: "2026-01-01T00:00:00.000Z")
        let first = GraphNode(
            id: "\(name):1", hash: "ba9876543210", device: name, seq: 1, lamport: 1, kind: "create",
            parents: [], time: "2026-01-01T00:00:00.000Z")
        let state = DocumentOnDevice(
            device: name, exists: true, name: name + " 2", state: ["normal"],
            vector: [VectorEntry(device: name, seq: 2)], heads: ["0123456789ab"],
            contents: [name, "```\u{301}", "````"],
            authorship: [
                AuthoredStretch(start: 0, text: name + "\n", change: "\(name):2", device: name),
                AuthoredStretch(start: 1, text: "x", change: nil, device: nil),
            ])
        let document = DocumentReport(
            id: "00000000-0000-0000-0000-000000000001", name: name, type: name,
            devices: [state], graph: [first, node])
        return ConflictReport(
            title: name, description: name, kind: .scenario, source: name, strategy: name,
            devices: [ReportDevice(name: name, id: "00000000-0000-0000-0000-000000000002", clockSkew: name)],
            timeline: [
                TimelineEntry(
                    step: 1, line: 3, time: "2026-01-01T00:00:00.000Z", action: name, events: [name], failure: name)
            ],
            documents: [document])
    }

    @Test(arguments: hostileNames)
    func everyTableRowHasTheCellsOfItsHeader(name: String) throws {
        let lines = report(name).markdown().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var header: Int?
        for line in lines {
            guard line.hasPrefix("|") else {
                header = nil
                continue
            }
            let cells = MarkdownReading.cells(of: line)
            if let header {
                #expect(cells.count == header, "a name broke out of its cell: \(line.debugDescription)")
            } else {
                header = cells.count
            }
        }
    }

    @Test(arguments: hostileNames)
    func codeSpansHoldTheWholeName(name: String) throws {
        let markdown = report(name).markdown()
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The source (a table cell), the step's action (a table cell), the document's type and its name on the
        // device (prose), each change and parent in the causal graph (table cells).
        let source = try #require(lines.first { $0.hasPrefix("| Source |") })
        #expect(
            MarkdownReading.codeSpans(in: MarkdownReading.cells(of: source)[1]) == [name], "\(source.debugDescription)")
        let step = try #require(lines.first { $0.hasPrefix("| **1 (line 3) ✗** |") })
        #expect(MarkdownReading.codeSpans(in: MarkdownReading.cells(of: step)[2]) == [name], "\(step.debugDescription)")
        let type = try #require(lines.first { $0.hasPrefix("`00000000-0000-0000-0000-000000000001` · ") })
        #expect(
            MarkdownReading.codeSpans(in: type) == ["00000000-0000-0000-0000-000000000001", name],
            "\(type.debugDescription)")
        let named = try #require(lines.first { $0.contains("· named ") })
        #expect(MarkdownReading.codeSpans(in: named).contains(name + " 2"), "\(named.debugDescription)")
        let typed = try #require(lines.first { $0.hasSuffix(" |") && $0.contains("↵") })
        let typedCells = MarkdownReading.cells(of: typed)
        #expect(MarkdownReading.codeSpans(in: typedCells[0]) == [name + "↵"], "\(typed.debugDescription)")
        #expect(MarkdownReading.codeSpans(in: typedCells[1]) == ["\(name):2"], "\(typed.debugDescription)")
        let change = try #require(lines.first { $0.contains("| edit |") })
        let cells = MarkdownReading.cells(of: change)
        #expect(MarkdownReading.codeSpans(in: cells[0]) == ["\(name):2"], "\(change.debugDescription)")
        #expect(MarkdownReading.codeSpans(in: cells[2]) == ["\(name):1"], "\(change.debugDescription)")
    }

    @Test(arguments: hostileNames)
    func inlineTextStartsNoCodeSpan(name: String) throws {
        let lines = report(name).markdown().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let device = try #require(lines.first { $0.contains("| `00000000-0000-0000-0000-000000000002` |") })
        let cells = MarkdownReading.cells(of: device)
        #expect(MarkdownReading.unescapedBackticks(in: cells[0]) == 0, "\(device.debugDescription)")
        #expect(MarkdownReading.literalText(cells[0]) == name, "\(device.debugDescription)")
        let heading = try #require(lines.first { $0.hasPrefix("## Document ") })
        #expect(MarkdownReading.unescapedBackticks(in: heading) == 0, "\(heading.debugDescription)")
        #expect(MarkdownReading.literalText(String(heading.dropFirst("## Document ".count))) == name)
    }

    @Test(arguments: hostileNames)
    func fencedBlocksAreLongerThanAnyBacktickRunInside(name: String) throws {
        let lines = report(name).markdown().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var fence: Int?
        for line in lines {
            let run = MarkdownReading.leadingBackticks(line)
            if let open = fence {
                if run >= open && line.unicodeScalars.dropFirst(run).allSatisfy({ $0 == " " }) {
                    fence = nil
                    continue
                }
                #expect(
                    MarkdownReading.longestBacktickRun(line) < open, "\(line.debugDescription) closes its block early")
            } else if run >= 3 {
                fence = run
            }
        }
        #expect(fence == nil)
    }
}

extension ReportEscapingTests {
    @Test(
        arguments: hostileNames + [
            "<\u{301}script>alert(1)</script\u{301}>", "&\u{301}amp;\"\u{301}'\u{301}>", "\u{1B}[31mred\u{9B}0m\u{7}",
        ])
    func htmlEscapesEveryPieceOfText(name: String) throws {
        let html = Array(report(name).html().unicodeScalars)
        func holds(_ text: String) -> Bool {
            let needle = Array(text.unicodeScalars)
            return html.indices.contains { html[$0...].starts(with: needle) }
        }
        #expect(!holds("<\u{301}"), "a `<` with a mark is still a tag to HTML")
        #expect(!holds("<script") && !holds("</script"))
        #expect(!holds("&\u{301}") && !holds("\"\u{301}") && !holds("'\u{301}") && !holds(">\u{301}"))
        #expect(
            !html.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" || (0x7F...0x9F).contains($0.value) },
            "no control characters")
    }
}

/// Reading Markdown as CommonMark with GitHub tables does: on Unicode scalars.
enum MarkdownReading {
    /// The cells of a table row as cmark-gfm splits it: at each pipe that is not directly after a backslash (its
    /// cell scanner takes `\\` followed by any punctuation as one unit, longest match first, so a pipe right after
    /// a backslash always stays in the cell), without the outer ones, each with `\|` turned back into `|`.
    static func cells(of row: String) -> [String] {
        var cells: [String] = []
        var current = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in row.unicodeScalars {
            if scalar == "|" && previous != "\\" {
                cells.append(String(current))
                current = String.UnicodeScalarView()
            } else if scalar == "|" {
                current.removeLast()
                current.append(scalar)
            } else {
                current.append(scalar)
            }
            previous = scalar
        }
        cells.append(String(current))
        // The text before the first pipe and after the last one is not a cell.
        return Array(cells.dropFirst().dropLast()).map { $0.trimmingCharacters(in: .init(charactersIn: " ")) }
    }

    /// The contents of the code spans in `text`: a run of backticks opens one, the next run of the same length
    /// closes it; one space is stripped from each side when both are spaces and the content is not all spaces.
    static func codeSpans(in text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var spans: [String] = []
        var index = 0
        while index < scalars.count {
            if scalars[index] == "\\" && index + 1 < scalars.count {
                index += 2
                continue
            }
            guard scalars[index] == "`" else {
                index += 1
                continue
            }
            let open = run(at: index, in: scalars)
            var search = index + open
            var closed: Int?
            while search < scalars.count {
                if scalars[search] == "`" {
                    let length = run(at: search, in: scalars)
                    if length == open {
                        closed = search
                        break
                    }
                    search += length
                } else {
                    search += 1
                }
            }
            guard let closed else {
                index += open
                continue
            }
            var content = Array(scalars[(index + open)..<closed])
            if content.count >= 2, content.first == " ", content.last == " ", content.contains(where: { $0 != " " }) {
                content = Array(content.dropFirst().dropLast())
            }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: content)
            spans.append(String(view))
            index = closed + open
        }
        return spans
    }

    /// How many backticks no backslash escapes (each could open a code span).
    static func unescapedBackticks(in text: String) -> Int {
        var count = 0
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped {
                escaped = false
                continue
            }
            if scalar == "\\" { escaped = true } else if scalar == "`" { count += 1 }
        }
        return count
    }

    /// Inline text with its backslash escapes removed (for ASCII punctuation, as CommonMark does).
    static func literalText(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped {
                if !(scalar.isASCII && scalar.properties.generalCategory.isPunctuationOrSymbol) { result.append("\\") }
                result.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    static func leadingBackticks(_ line: String) -> Int {
        line.unicodeScalars.prefix { $0 == "`" }.count
    }

    static func longestBacktickRun(_ line: String) -> Int {
        var longest = 0
        var current = 0
        for scalar in line.unicodeScalars {
            current = scalar == "`" ? current + 1 : 0
            longest = max(longest, current)
        }
        return longest
    }

    private static func run(at index: Int, in scalars: [Unicode.Scalar]) -> Int {
        var end = index
        while end < scalars.count && scalars[end] == "`" { end += 1 }
        return end - index
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isPunctuationOrSymbol: Bool {
        switch self {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            true
        default:
            false
        }
    }
}
