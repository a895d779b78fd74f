import FolioChildProcess
import FolioTesting
import FolioToolRunner
import Foundation
import Testing

/// `folio replay`, `fuzz` and `inspect` as CI runs them: exit codes, messages, report files.
@Suite struct CommandLineTests {
    let scenarios = ScenarioReplayTests.scenarios

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-cli-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func replayPassesAndWritesReports() async throws {
        let out = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        let files = ["01-offline-edits-ask-user.yaml", "07-rename-race.yaml"].map {
            scenarios.appendingPathComponent($0).path
        }
        let run = try await ToolRun.folio(["replay"] + files + ["--report", "html", "--out", out.path])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("PASS  \(files[0])"))
        #expect(run.output.hasSuffix("2 scenarios: 2 passed, 0 failed\n"))
        let html = try String(contentsOf: out.appendingPathComponent("01-offline-edits-ask-user.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(!html.contains("http://") || html.contains("http://www.w3.org/2000/svg"), "no network references")
    }

    @Test func reportsFollowTheirFilesSubdirectoriesAndNeverOverwriteEachOther() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let tree = work.appendingPathComponent("tree")
        for (directory, scenario) in [("a", "01-offline-edits-ask-user.yaml"), ("b", "07-rename-race.yaml")] {
            try FileManager.default.createDirectory(
                at: tree.appendingPathComponent(directory), withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: scenarios.appendingPathComponent(scenario),
                to: tree.appendingPathComponent("\(directory)/same.yaml"))
        }
        let a = tree.appendingPathComponent("a/same.yaml").path
        let b = tree.appendingPathComponent("b/same.yaml").path

        let out = work.appendingPathComponent("out")
        let run = try await ToolRun.folio(["replay", tree.path, a, "--report", "md", "--out", out.path])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(
            run.output.hasSuffix("2 scenarios: 2 passed, 0 failed\n"), "a file named twice runs once: \(run.output)")
        let first = try String(contentsOf: out.appendingPathComponent("a/same.md"), encoding: .utf8)
        let second = try String(contentsOf: out.appendingPathComponent("b/same.md"), encoding: .utf8)
        #expect(first != second, "each scenario its own report")

        let clash = try await ToolRun.folio([
            "replay", a, b, "--report", "md", "--out", work.appendingPathComponent("flat").path,
        ])
        #expect(clash.status == 2)
        #expect(clash.output.isEmpty, "nothing runs: \(clash.output)")
        #expect(
            clash.errors.contains("\(a) and \(b) would both write \(work.appendingPathComponent("flat/same.md").path)"))
        #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("flat").path))
    }

    @Test func aFailedExpectationExitsOneAndSaysWhere() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("wrong.yaml")
        try Data(
            """
            name: Wrong
            devices: [{name: iPad}]
            steps:
              - create: {device: iPad, document: Notes, text: "a"}
              - expect: {document: Notes, text: "b"}
            """.utf8
        ).write(to: file)
        let run = try await ToolRun.folio(["replay", file.path])
        #expect(run.status == 1)
        #expect(run.output.contains("FAIL  \(file.path)"))
        #expect(run.output.contains("\(file.path):5: step 2: iPad: expected Notes text: \"b\", found \"a\""))
    }

    @Test func invalidInputExitsTwoAndRunsNothing() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = scenarios.appendingPathComponent("01-offline-edits-ask-user.yaml").path
        let bad = directory.appendingPathComponent("bad.yaml")
        try Data(
            """
            name: Bad
            devices: [{name: iPad}]
            steps:
              - edit: {devise: iPad, document: Notes, append: "x"}
              - wait: 5 minutes
            """.utf8
        ).write(to: bad)
        let run = try await ToolRun.folio(["replay", good, bad.path])
        #expect(run.status == 2)
        #expect(run.output.isEmpty, "nothing runs: \(run.output)")
        #expect(run.errors.contains("\(bad.path):4:"))
        #expect(run.errors.contains("did you mean 'device'?"))
        #expect(run.errors.contains("\(bad.path):5:"))
        #expect(run.errors.contains("nothing was run"))
        #expect(try await ToolRun.folio(["replay", directory.appendingPathComponent("missing.yaml").path]).status == 2)
        // What a step cannot do because a device crashed is known from the file alone.
        let crashed = directory.appendingPathComponent("crashed.yaml")
        try Data(
            """
            name: Crashed
            devices: [{name: iPad}]
            steps:
              - create: {device: iPad, document: Notes}
              - crash: {device: iPad}
              - edit: {device: iPad, document: Notes, append: "x"}
            """.utf8
        ).write(to: crashed)
        let crashedRun = try await ToolRun.folio(["replay", good, crashed.path])
        #expect(crashedRun.status == 2)
        #expect(crashedRun.output.isEmpty, "nothing runs: \(crashedRun.output)")
        #expect(
            crashedRun.errors.contains(
                "\(crashed.path):6:5: error: 'iPad' crashed at line 5 and has not restarted; restart it first: - restart: {device: iPad}"
            ))
        #expect(try await ToolRun.folio(["replay", good, "--report", "pdf", "--out", directory.path]).status == 2)
    }

    @Test func fuzzReportsItsSeedsAndInspectReadsAKeptLibrary() async throws {
        let fuzz = try await ToolRun.folio(["fuzz", "--seeds", "1...3", "--devices", "2", "--steps", "15"])
        #expect(fuzz.status == 0, "\(fuzz.output)\(fuzz.errors)")
        #expect(fuzz.output.contains("3 scenarios (seeds 1...3), 0 violations"))

        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = scenarios.appendingPathComponent("01-offline-edits-ask-user.yaml").path
        let replay = try await ToolRun.folio(["replay", file, "--work-dir", work.path, "--keep"])
        #expect(replay.status == 0, "\(replay.output)\(replay.errors)")
        let library = try #require(Self.keptLibraries(in: replay.output)["iPad"])
        let inspect = try await ToolRun.folio(["inspect", library.path, "--report", "json"])
        #expect(inspect.status == 0, "\(inspect.errors)")
        #expect(inspect.output.contains("\"kind\" : \"library\""))
        #expect(inspect.output.contains("\"name\" : \"Notes\""))
        #expect(try await ToolRun.folio(["inspect", work.path]).status == 2, "not a library")
    }

    /// The libraries `replay --keep` printed that it kept, by device name: `  kept iPad in PATH` lines.
    static func keptLibraries(in output: String) -> [String: URL] {
        var libraries: [String: URL] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("  kept ") {
            let parts = line.dropFirst("  kept ".count).components(separatedBy: " in ")
            guard parts.count == 2 else { continue }
            libraries[parts[0]] = URL(fileURLWithPath: parts[1], isDirectory: true)
        }
        return libraries
    }

    @Test func keepPrintsEachDevicesLibraryInADirectoryNamedAfterIt() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let files = ["01-offline-edits-ask-user.yaml", "15-three-devices-records.yaml"].map {
            scenarios.appendingPathComponent($0).path
        }
        let run = try await ToolRun.folio(["replay"] + files + ["--work-dir", work.path, "--keep"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Each scenario's PASS line is followed by where each of its devices' libraries is, in the file's order.
        let first = try #require(lines.firstIndex { $0.hasPrefix("PASS  \(files[0])") })
        let kept = lines[(first + 1)...].prefix { $0.hasPrefix("  kept ") }
        #expect(kept.count == 2, "\(run.output)")
        let libraries = Self.keptLibraries(in: kept.joined(separator: "\n"))
        #expect(Array(libraries.keys).sorted() == ["Mac", "iPad"], "\(run.output)")
        for (device, place) in [("iPad", 1), ("Mac", 2)] {
            let library = try #require(libraries[device])
            #expect(library.lastPathComponent == "device-\(place)-\(device)", "named after the device: \(library.path)")
            #expect(library.path.hasPrefix(work.path + "/"), "under --work-dir: \(library.path)")
            #expect(FileManager.default.fileExists(atPath: library.appendingPathComponent(".folio/store.sqlite").path))
            let inspect = try await ToolRun.folio(["inspect", library.path, "--report", "json"])
            #expect(inspect.status == 0, "\(inspect.errors)")
            #expect(inspect.output.contains("\"name\" : \"\(device)\""))
        }
        let second = try #require(lines.firstIndex { $0.hasPrefix("PASS  \(files[1])") })
        #expect(lines[(second + 1)...].prefix { $0.hasPrefix("  kept ") }.count == 3, "\(run.output)")
        #expect(run.output.hasSuffix("2 scenarios: 2 passed, 0 failed\n"))

        // Without --keep, nothing is said about libraries: they are gone.
        let plain = try await ToolRun.folio(["replay", files[0]])
        #expect(!plain.output.contains("kept"), "\(plain.output)")
    }

    /// Runs `sql` on the database file at `url` with the `sqlite3` tool.
    static func sqlite(_ sql: String, on url: URL) throws -> (status: Int32, errors: String) {
        let run = try ChildProcess.run("/usr/bin/env", arguments: ["sqlite3", "-bail", url.path, sql])
        return (run.status, run.errorText)
    }

    static let hasSQLiteTool = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/bin/sqlite3"].contains {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test func inspectNamesTheOpenConflictAndWhere() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = work.appendingPathComponent("open.yaml")
        try Data(
            """
            name: Left open
            devices: [{name: iPad}, {name: Mac}]
            steps:
              - create: {device: iPad, document: Notes, text: "Shopping\\nmilk\\n"}
              - sync: all
              - offline: [iPad, Mac]
              - edit: {device: iPad, document: Notes, replace: "Shopping\\noat milk\\n"}
              - edit: {device: Mac, document: Notes, replace: "Shopping\\nalmond milk\\n"}
              - online: [iPad, Mac]
              - sync: all
            """.utf8
        ).write(to: file)
        let replay = try await ToolRun.folio(["replay", file.path, "--work-dir", work.path, "--keep"])
        #expect(replay.status == 0, "\(replay.output)\(replay.errors)")
        let library = try #require(Self.keptLibraries(in: replay.output)["Mac"])
        let inspect = try await ToolRun.folio(["inspect", library.path])
        #expect(inspect.status == 1)
        let message = inspect.errors
        #expect(message.hasPrefix("folio: \(library.path): Notes has an open conflict ("), "\(message)")
        #expect(
            message.contains(") between the versions of Mac and iPad")
                || message.contains(") between the versions of iPad and Mac"), "\(message)")
        #expect(!inspect.errors.contains("or an unsound store"), "says which, not either: \(inspect.errors)")
    }

    @Test(.enabled(if: hasSQLiteTool, "the sqlite3 tool alters the store"))
    func inspectNamesTheFailedCheckOfADamagedStoreAndWhere() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let file = scenarios.appendingPathComponent("01-offline-edits-ask-user.yaml").path
        let replay = try await ToolRun.folio(["replay", file, "--work-dir", work.path, "--keep"])
        #expect(replay.status == 0, "\(replay.output)\(replay.errors)")
        let library = try #require(Self.keptLibraries(in: replay.output)["iPad"])
        #expect(try await ToolRun.folio(["inspect", library.path]).status == 0, "sound and settled before")

        // The last byte of iPad's second change, altered behind the store's back.
        let damage = try Self.sqlite(
            """
            DROP TRIGGER change_is_append_only_on_update;
            UPDATE change SET body = substr(body, 1, length(body) - 1) || X'7A'
            WHERE seq = 2 AND device = (SELECT device FROM change WHERE seq = 3 LIMIT 1);
            """, on: library.appendingPathComponent(".folio/store.sqlite"))
        try #require(damage.status == 0, "\(damage.errors)")
        let inspect = try await ToolRun.folio(["inspect", library.path])
        #expect(inspect.status == 1, "\(inspect.errors)")
        let message = inspect.errors
        #expect(message.hasPrefix("folio: \(library.path): the store failed verification: "), "\(message)")
        #expect(message.contains("; the first: document "), "\(message)")
        #expect(message.contains(" (Notes) change "), "names the document: \(message)")
        #expect(message.contains("#2 (iPad): its bytes hash to "), "names the change and its device: \(message)")
        #expect(message.contains("the row was altered"), "says which check: \(message)")
        #expect(!message.contains("or an unsound store"), "says which, not either: \(message)")
    }

    @Test func logShowAndVerifyOnlyReadTheStore() async throws {
        let work = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let folder = work.appendingPathComponent("Shared").path
        let store = work.appendingPathComponent("A.sqlite")
        for (device, append) in [("A", 2), ("B", 1), ("A", 0)] {
            let path = work.appendingPathComponent("\(device).sqlite").path
            let run = try await ToolRun.folio([
                "log", "sync", "--store", path, "--folder", folder, "--device", device, "--append", "\(append)",
            ])
            #expect(run.status == 0, "\(run.output)\(run.errors)")
        }
        let before = try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
        let bytes = try Data(contentsOf: store)

        let show = try await ToolRun.folio(["log", "show", store.path])
        #expect(show.status == 0, "\(show.errors)")
        #expect(show.output.contains("  vector  A 2, B 1\n"), "names, not identities: \(show.output)")
        let verify = try await ToolRun.folio(["log", "verify", store.path])
        #expect(verify.status == 0, "\(verify.errors)")
        #expect(verify.output == "sound: 1 document, 3 changes\n")

        #expect(try Data(contentsOf: store) == bytes, "no device registered, nothing recovered or checkpointed")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: work.path).sorted() == before,
            "no -wal or -shm beside it")
    }

    @Test func fuzzRunsInTheWorkDirectoryAndLeavesItEmpty() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let work = root.appendingPathComponent("made/for/fuzzing")
        let fuzz = try await ToolRun.folio([
            "fuzz", "--seeds", "1...4", "--devices", "2", "--steps", "20", "--work-dir", work.path,
        ])
        #expect(fuzz.status == 0, "\(fuzz.output)\(fuzz.errors)")
        #expect(fuzz.output.contains("4 scenarios (seeds 1...4), 0 violations"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: work.path) == [], "made, used, and emptied at the end")
    }

    @Test(arguments: ["replay", "fuzz"])
    func aWorkDirectoryThatIsAFileIsRefusedBeforeAnythingRuns(command: String) async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("notes.txt")
        try Data("not a directory".utf8).write(to: file)
        let target =
            command == "replay"
            ? [scenarios.appendingPathComponent("01-offline-edits-ask-user.yaml").path] : ["--seeds", "1"]
        let run = try await ToolRun.folio([command] + target + ["--work-dir", file.path])
        #expect(run.status == 2, "\(run.output)\(run.errors)")
        #expect(
            run.errors.contains("--work-dir \(file.path) is a file; name a directory (it is made if missing)"),
            "\(run.errors)")
        #expect(run.output.isEmpty, "nothing ran")
        let blocked = root.appendingPathComponent("notes.txt/below")
        let below = try await ToolRun.folio([command] + target + ["--work-dir", blocked.path])
        #expect(below.status == 2, "\(below.output)\(below.errors)")
        #expect(below.errors.contains("--work-dir \(blocked.path) cannot be made ("), "\(below.errors)")
        #expect(below.output.isEmpty, "nothing ran")
    }

    @Test func fuzzHelpGivesEachDefaultOnce() async throws {
        let help = try await ToolRun.folio(["fuzz", "--help"])
        #expect(help.status == 0)
        let flat = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(
            flat.contains("How many scenarios run at once, 1...256 (default: the number of cores)."), "\(help.output)")
        #expect(
            flat.contains(
                "Exit 0 when every scenario kept the invariants, 1 when a seed broke one, 2 for invalid options; "
                    + "interrupted (Ctrl-C, SIGTERM), it removes the libraries of its runs and exits 130 (143)."))
        #expect(
            flat.components(separatedBy: "(default:").count - 1 == 4,
            "--devices, --steps, --jobs and --work-dir: \(help.output)")
    }

    @Test(arguments: [
        (["--seeds", "5...1"], "write the smaller number first: 1...5"),
        (["--seeds", "abc"], "write a number, such as 7, or a range, such as 1...1000"),
        (["--seeds", "1..5"], "write a number, such as 7, or a range, such as 1...1000"),
        (["--seeds", "0...18446744073709551615"], "--seeds must hold 1...1000000000 seeds, not 18446744073709551616"),
        (["--seeds", "1", "--devices", "4...2"], "write the smaller number first: 2...4"),
        (["--seeds", "1", "--devices", "2...9"], "--devices must be within 1...8"),
        (["--seeds", "1", "--jobs", "0"], "--jobs must be within 1...256, not 0"),
    ])
    func fuzzRefusesRangesItCannotRun(arguments: [String], message: String) async throws {
        let run = try await ToolRun.folio(["fuzz"] + arguments)
        #expect(run.status == 2)
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(run.output.isEmpty, "nothing ran")
    }
}
