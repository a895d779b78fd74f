import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// What `folio` prints to a terminal: names and texts from stores, libraries and scenario files are someone else's
/// input, so control characters, escape sequences and bidirectional overrides in them are shown escaped
/// (`\u001B`, which reads the same inside a JSON string), never sent raw; printable text, any script or emoji, is
/// printed as it is.
@Suite struct TerminalOutputTests {
    /// ESC starting a title change and a screen clear, a C1 CSI, a bell, a right-to-left override and a newline
    /// that would forge a line of output.
    static let hostile = "Eve\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}31m\u{202E}txt.exe\nforged: ok"

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-terminal-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The scalars a terminal acts on instead of showing: C0 (but newline and tab), DEL, C1, bidirectional controls.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: false
        case 0x00..<0x20, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }

    func expectSafe(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let unsafe = text.unicodeScalars.filter(Self.isUnsafe)
        #expect(
            unsafe.isEmpty, "raw \(unsafe.map { String($0.value, radix: 16) }) in \(text.debugDescription)",
            sourceLocation: sourceLocation)
        #expect(
            !text.contains("\nforged: ok"), "a name forged a line: \(text.debugDescription)",
            sourceLocation: sourceLocation)
    }

    @Test func logShowEscapesDeviceNames() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("A.sqlite").path
        let sync = try await ToolRun.folio([
            "log", "sync", "--store", store, "--folder", work.appendingPathComponent("Shared").path,
            "--device", Self.hostile, "--append", "2",
        ])
        #expect(sync.status == 0, "\(sync.errors)")
        expectSafe(sync.output)

        let show = try await ToolRun.folio(["log", "show", store])
        #expect(show.status == 0, "\(show.errors)")
        expectSafe(show.output)
        #expect(
            show.output.contains(#"Eve\u001B]0;owned\u0007\u001B[2J\u009B31m\u202Etxt.exe\u000Aforged: ok 2"#),
            "\(show.output)")
    }

    @Test func replayEscapesNamesAndTextsInFailuresAndErrors() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("hostile.yaml")
        try Data(
            """
            name: Hostile names
            devices: [{name: iPad}]
            steps:
              - create: {device: iPad, document: "Eve\\u202Etxt", text: "a\\e]0;x\\u0007"}
              - expect: {document: "Eve\\u202Etxt", device: iPad, text: "b"}
            """.utf8
        ).write(to: file)
        let run = try await ToolRun.folio(["replay", file.path])
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        expectSafe(run.output)
        #expect(run.output.contains(#"Eve\u202Etxt"#), "\(run.output)")

        let invalid = work.appendingPathComponent("invalid.yaml")
        try Data(
            """
            name: Hostile names
            devices: [{name: iPad}]
            steps:
              - edit: {device: iPad, document: "Eve\\u202Etxt", append: "x"}
            """.utf8
        ).write(to: invalid)
        let refused = try await ToolRun.folio(["replay", invalid.path])
        #expect(refused.status == 2, "\(refused.output)\(refused.errors)")
        expectSafe(refused.errors)
        #expect(refused.errors.contains(#"Eve\u202Etxt"#), "\(refused.errors)")
    }

    @Test func inspectEscapesTheReportItPrints() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("hostile.yaml")
        try Data(
            """
            name: Hostile names
            devices: [{name: iPad}]
            steps:
              - create: {device: iPad, document: "Eve\\u202Etxt", text: "a\\e]0;x\\u0007 é ✓ 👩‍👩‍👧"}
              - save: {device: iPad, document: "Eve\\u202Etxt"}
            """.utf8
        ).write(to: file)
        let replay = try await ToolRun.folio(["replay", file.path, "--work-dir", work.path, "--keep"])
        #expect(replay.status == 0, "\(replay.output)\(replay.errors)")
        let library = try #require(CommandLineTests.keptLibraries(in: replay.output)["iPad"])
        for format in ["md", "json"] {
            let inspect = try await ToolRun.folio(["inspect", library.path, "--report", format])
            #expect(inspect.status == 0, "\(inspect.errors)")
            expectSafe(inspect.output)
            #expect(inspect.output.contains("é ✓ 👩‍👩‍👧"), "printable text stays as it is: \(inspect.output)")
            if format == "json" {
                // The escapes are JSON's own: the report reads back with the names as they are.
                let report = try #require(
                    try JSONSerialization.jsonObject(with: Data(inspect.output.utf8)) as? [String: Any])
                let documents = try #require(report["documents"] as? [[String: Any]])
                #expect(documents.first?["name"] as? String == "Eve\u{202E}txt")
            }
        }
    }
}

extension TerminalOutputTests {
    @Test func keepPrintsHostileDeviceNamesEscapedAndKeepsTheirLibrariesInside() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("hostile.yaml")
        try Data(
            """
            name: Hostile device
            devices: [{name: "../../Eve\\e]0;x\\u0007\\u202E\\nforged: ok"}, {name: Mac}]
            steps:
              - create: {device: Mac, document: Notes, text: "a"}
              - sync: all
            """.utf8
        ).write(to: file)
        let runs = work.appendingPathComponent("runs")
        let replay = try await ToolRun.folio(["replay", file.path, "--work-dir", runs.path, "--keep"])
        #expect(replay.status == 0, "\(replay.output)\(replay.errors)")
        expectSafe(replay.output)
        #expect(
            replay.output.contains(#"  kept ../../Eve\u001B]0;x\u0007\u202E\u000Aforged: ok in "#), "\(replay.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).sorted() == ["hostile.yaml", "runs"])
        let run = try #require(try FileManager.default.contentsOfDirectory(atPath: runs.path).first)
        let devices = try FileManager.default.contentsOfDirectory(atPath: runs.appendingPathComponent(run).path)
        #expect(devices.sorted() == ["device-1-.._.._Eve__0_x___forged__ok", "device-2-Mac"], "\(devices)")
    }
}

/// `folio fuzz` shows its progress on standard error when that is a terminal, and never in piped output.
@Suite struct FuzzProgressTests {
    @Test func pipedOutputHasNoProgress() async throws {
        let run = try await ToolRun.folio(["fuzz", "--seeds", "1...3", "--devices", "2", "--steps", "15"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.errors.isEmpty, "\(run.errors.debugDescription)")
        #expect(!run.output.contains("\r"), "\(run.output.debugDescription)")
        #expect(run.output.hasPrefix("3 scenarios (seeds 1...3), 0 violations"), "\(run.output)")
    }

    @Test func aTerminalShowsProgressWhileAScenarioRuns() async throws {
        // One long scenario: the line moves with its steps, not only when scenarios end.
        let process = try ToolProcess.start(
            ["fuzz", "--seeds", "1", "--devices", "3", "--steps", "2000"], errorsOnATerminal: true)
        let run = await process.finish()
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(
            run.errors.contains("0/1 scenarios, 0 violations, ") && run.errors.contains(" steps"),
            "progress while the scenario runs: \(run.errors.debugDescription)")
        #expect(
            run.errors.components(separatedBy: "\r\u{1B}[K").count > 2,
            "the line is rewritten in place: \(run.errors.debugDescription)")
        #expect(run.errors.hasSuffix("\r\u{1B}[K"), "and cleared at the end: \(run.errors.debugDescription)")
        #expect(!run.output.contains("\r") && !run.output.contains("\u{1B}"), "\(run.output.debugDescription)")
        #expect(run.output.hasPrefix("1 scenario (seeds 1), 0 violations"), "\(run.output)")
    }
}
