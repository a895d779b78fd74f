import FolioCore
import FolioDocuments
import FolioModels
import FolioReports
import Foundation
import Testing

/// The renderings: byte-identical for the same input, JSON that reads back, HTML that escapes, a picture per graph.
@Suite struct ReportRenderingTests {
    let devices: TwoDevices

    init() throws {
        devices = try TwoDevices()
    }

    @Test func theSameCapturesRenderTheSameBytes() async throws {
        let text = try await TextConflict(devices)
        let records = try await RecordsConflict(devices)
        let captures = try await text.captures() + records.captures()
        let first = report(captures, devices: devices)
        let second = report(captures.reversed(), devices: devices)
        #expect(first == second, "the order captures come in does not matter")
        #expect(first.json() == first.json())
        #expect(first.markdown() == first.markdown())
        #expect(first.html() == first.html())
        let again = report(try await text.captures() + records.captures(), devices: devices)
        #expect(again.json() == first.json(), "capturing twice from the same libraries gives the same report")
        #expect(again.markdown() == first.markdown())
        #expect(again.html() == first.html())
        #expect(first.documents.map(\.name) == ["Contacts", "Notes"], "documents by name")
    }

    @Test func twoRunsOfTheSameStepsGiveTheSameReport() async throws {
        let other = try TwoDevices()
        let first = report(try await TextConflict(devices).captures(), devices: devices)
        let second = report(try await TextConflict(other).captures(), devices: other)
        #expect(first.json() == second.json())
        #expect(first.html() == second.html())
        #expect(first.markdown() == second.markdown())
    }

    @Test func jsonReadsBackToTheSameValue() async throws {
        let records = try await RecordsConflict(devices)
        let value = report(try await records.captures(), devices: devices)
        let json = value.json()
        #expect(json.hasSuffix("}\n"))
        #expect(json.contains("\"schemaVersion\" : 1") || json.contains("\"schemaVersion\": 1"))
        #expect(!json.contains("\\/"), "slashes are not escaped")
        #expect(try ConflictReport(json: json) == value)
        #expect(try ConflictReport(json: json).json() == json)
    }

    @Test func jsonOfANewerSchemaIsRefused() throws {
        var value = ConflictReport(title: "t", kind: .library)
        value.schemaVersion = 2
        #expect(throws: ReportError.self) { try ConflictReport(json: value.json()) }
        #expect(throws: ReportError.self) { try ConflictReport(json: "[1, 2]") }
    }

    @Test func hostileNamesAreEscapedInHTML() async throws {
        let hostile = try TwoDevices(iPadName: "<script>alert(\"x\")</script>", macName: "Mac & 'Co'")
        let conflict = try await TextConflict(hostile, name: "<img src=x onerror=alert(1)>")
        let value = report(try await conflict.captures(), devices: hostile, title: "<b>Title</b>")
        let html = value.html()
        #expect(!html.contains("<script>"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("<b>Title"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"))
        #expect(html.contains("Mac &amp; &#39;Co&#39;"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        let markdown = value.markdown()
        #expect(markdown.contains("# \\<b\\>Title\\</b\\>"))
        #expect(markdown.contains("## Document \\<img src=x onerror=alert(1)\\>"))
    }

    @Test func htmlDrawsOneNodePerChange() async throws {
        let text = try await TextConflict(devices)
        let records = try await RecordsConflict(devices)
        let value = report(try await text.captures() + records.captures(), devices: devices)
        let html = value.html()
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!html.contains("<script"), "no scripts")
        #expect(
            !html.contains("http://") || html.components(separatedBy: "http://").count == 3, "only the SVG namespaces")
        #expect(html.components(separatedBy: "<svg").count - 1 == value.documents.count)
        let nodes = value.documents.reduce(0) { $0 + $1.graph.count }
        #expect(html.components(separatedBy: "<circle").count - 1 == nodes)
        #expect(html.components(separatedBy: "class=\"node resolution").count - 1 == 1)
        #expect(html.contains("open-head"), "the open conflict's heads are marked")
        #expect(html.contains("class=\"failed\""), "a failed step is marked")
        #expect(html.contains("conflict open"))
    }

    @Test func markdownListsConflictsStatesAndTheGraph() async throws {
        let records = try await RecordsConflict(devices)
        let markdown = report(try await records.captures(), devices: devices).markdown()
        #expect(markdown.contains("## Document Contacts"))
        #expect(markdown.contains("resolved (latestWins)"))
        #expect(markdown.contains("-Oslo\n+Bergen"))
        #expect(markdown.contains("r1: city=Bergen, name=Ann"), "the loss ledger shows what was discarded")
        #expect(markdown.contains("| `iPad:1` | create |"))
        #expect(markdown.contains("**FAILED** (1 failure)"))
        #expect(markdown.hasSuffix("\n"))
    }
}
