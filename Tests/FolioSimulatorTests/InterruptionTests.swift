import FolioToolRunner
import Foundation
import Testing

/// `folio replay` and `folio fuzz` killed by Ctrl-C (SIGINT) or SIGTERM while scenarios run: the temporary run
/// directories go with them, and the tool exits 130 or 143 as a shell reports a process those signals ended.
@Suite struct InterruptionTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-interrupt-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A scenario that runs for a long while: two devices editing one note and syncing, `rounds` times.
    static func longScenario(rounds: Int) -> String {
        var lines = [
            "name: Long", "devices: [{name: iPad}, {name: Mac}]", "steps:",
            "  - create: {device: iPad, document: Notes, text: \"a\\n\"}", "  - sync: all",
        ]
        for round in 0..<rounds {
            lines.append("  - edit: {device: iPad, document: Notes, append: \"i\(round)\\n\"}")
            lines.append("  - edit: {device: Mac, document: Notes, append: \"m\(round)\\n\"}")
            lines.append("  - sync: all")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every file and directory under `directory`, as paths relative to it.
    static func everything(under directory: URL) -> [String] {
        (FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String] ?? []).sorted()
    }

    /// Waits for `process` to exit, at most `seconds`; kills it (and records an issue) if it has not by then.
    static func waitForExit(of process: ToolProcess, seconds: Double = 60) async throws -> ToolRun {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.send(SIGKILL)
            Issue.record("still running \(seconds) s after the signal; killed")
        }
        return await process.finish()
    }

    /// Waits until a device's store exists somewhere under `directory` (scenarios are running), at most `seconds`.
    static func waitForAStore(under directory: URL, seconds: Double = 120) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        func found() -> Bool { everything(under: directory).contains { $0.hasSuffix(".folio/store.sqlite") } }
        while Date() < deadline {
            if found() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Once more: a test resumed only after the deadline (the pool busy) looks before it gives up.
        return found()
    }

    @Test(arguments: [
        ("replay", SIGTERM, false), ("replay", SIGINT, false), ("fuzz", SIGTERM, false), ("fuzz", SIGINT, false),
        ("replay", SIGINT, true), ("fuzz", SIGTERM, true),
    ])
    func aSignalMidRunRemovesTheRunDirectories(command: String, signal: Int32, workDirectory: Bool) async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        // The tool's temporary directory, where its runs go without --work-dir.
        let temporary = root.appendingPathComponent("tmp", isDirectory: true)
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let work = root.appendingPathComponent("work", isDirectory: true)
        var arguments: [String]
        if command == "replay" {
            let file = root.appendingPathComponent("long.yaml")
            try Data(Self.longScenario(rounds: 20_000).utf8).write(to: file)
            arguments = ["replay", file.path]
        } else {
            arguments = ["fuzz", "--seeds", "1...100000", "--devices", "3", "--steps", "300", "--jobs", "2"]
        }
        if workDirectory { arguments += ["--work-dir", work.path] }
        let watched = workDirectory ? work : temporary

        let process = try ToolProcess.start(arguments, environment: ["TMPDIR": temporary.path])
        let running = try await Self.waitForAStore(under: watched)
        #expect(running, "a device's library appeared under \(watched.path)")
        #expect(process.isRunning, "still running when signalled")
        process.send(signal)
        let run = try await Self.waitForExit(of: process)

        #expect(!process.terminatedBySignal, "it handled the signal: \(run.errors)")
        #expect(run.status == 128 + signal, "\(run.output)\(run.errors)")
        #expect(run.errors.contains("interrupted by"), "it says why it stopped: \(run.errors)")
        #expect(!run.output.contains("FAIL"), "no verdict on a run it cut short: \(run.output)")
        #expect(Self.everything(under: temporary) == [], "nothing left in the temporary directory")
        if workDirectory {
            #expect(Self.everything(under: work) == [], "nothing left in the work directory")
        }
    }

    @Test func keptLibrariesStayWhenReplayIsInterrupted() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let temporary = root.appendingPathComponent("tmp", isDirectory: true)
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let work = root.appendingPathComponent("work", isDirectory: true)
        let file = root.appendingPathComponent("long.yaml")
        try Data(Self.longScenario(rounds: 20_000).utf8).write(to: file)

        let process = try ToolProcess.start(
            ["replay", file.path, "--work-dir", work.path, "--keep"], environment: ["TMPDIR": temporary.path])
        #expect(try await Self.waitForAStore(under: work))
        process.send(SIGTERM)
        let run = try await Self.waitForExit(of: process)
        #expect(run.status == 143, "\(run.output)\(run.errors)")
        #expect(
            Self.everything(under: work).contains { $0.hasSuffix("iPad/.folio/store.sqlite") },
            "--keep keeps the libraries, even of the run interrupted")
        #expect(Self.everything(under: temporary) == [])
    }
}
