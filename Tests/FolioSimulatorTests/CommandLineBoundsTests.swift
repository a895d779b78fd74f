import FolioToolRunner
import Foundation
import Testing

/// Every count of every `folio` command is checked before anything runs: a value out of its range exits 2 with a
/// message that names the option, the value given and the range allowed, at once, without running or allocating
/// anything for it.
@Suite struct CommandLineBoundsTests {
    /// Runs `folio` with `arguments`, failing the test (and killing the process) if it has not exited within
    /// `seconds`: a count that is not checked makes the tool work, or allocate, until it is killed.
    func folio(_ arguments: [String], within seconds: Double = 60, in directory: URL? = nil) async throws -> ToolRun {
        let process = try ToolProcess.start(arguments, in: directory)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.send(SIGKILL)
            Issue.record("folio \(arguments.joined(separator: " ")) still ran after \(seconds) s; killed")
        }
        return await process.finish()
    }

    @Test(arguments: [
        (["fuzz", "--seeds", "1", "--steps", "99999999999"], "--steps must be within 1...100000, not 99999999999"),
        (["fuzz", "--seeds", "1", "--steps", "0"], "--steps must be within 1...100000, not 0"),
        (["fuzz", "--seeds", "1", "--steps=-5"], "--steps must be within 1...100000, not -5"),
        (["fuzz", "--seeds", "1", "--jobs", "0"], "--jobs must be within 1...256, not 0"),
        (["fuzz", "--seeds", "1", "--jobs", "100000"], "--jobs must be within 1...256, not 100000"),
        (["fuzz", "--seeds", "1", "--devices", "0"], "--devices must be within 1...8, not 0"),
        (["fuzz", "--seeds", "1", "--devices", "2...9"], "--devices must be within 1...8, not 2...9"),
        (
            ["fuzz", "--seeds", "1...99999999999"],
            "--seeds must hold 1...1000000000 seeds, not 99999999999 (1...99999999999)"
        ),
        (
            ["fuzz", "--seeds", "0...18446744073709551615"],
            "--seeds must hold 1...1000000000 seeds, not 18446744073709551616 (0...18446744073709551615)"
        ),
        (["log", "exercise", "--edits", "0"], "--edits must be within 1...100000, not 0"),
        (["log", "exercise", "--edits", "99999999999"], "--edits must be within 1...100000, not 99999999999"),
    ])
    func anOutOfRangeCountExitsTwoAndSaysTheRange(arguments: [String], message: String) async throws {
        let run = try await folio(arguments)
        #expect(run.status == 2, "\(run.output)\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(run.output.isEmpty, "nothing ran: \(run.output)")
    }

    @Test(arguments: [
        (["append", "--count=-1"], "--count must be within 0...10000000 (0: until killed), not -1"),
        (
            ["append", "--count", "99999999999"],
            "--count must be within 0...10000000 (0: until killed), not 99999999999"
        ),
        (["append", "--batch", "0"], "--batch must be within 1...100000, not 0"),
        (["append", "--batch", "99999999999"], "--batch must be within 1...100000, not 99999999999"),
        (["sync", "--folder", "Shared", "--rounds", "0"], "--rounds must be within 1...1000000, not 0"),
        (
            ["sync", "--folder", "Shared", "--rounds", "99999999999"],
            "--rounds must be within 1...1000000, not 99999999999"
        ),
        (["sync", "--folder", "Shared", "--append=-1"], "--append must be within 0...100000, not -1"),
        (
            ["sync", "--folder", "Shared", "--append", "99999999999"],
            "--append must be within 0...100000, not 99999999999"
        ),
    ])
    func aLogDriverRefusesAnOutOfRangeCountBeforeOpeningTheStore(arguments: [String], message: String) async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-bounds-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let run = try await folio(["log"] + arguments + ["--store", "A.sqlite"], in: work)
        #expect(run.status == 2, "\(run.output)\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
        #expect(run.output.isEmpty, "nothing ran: \(run.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [], "no store, no folder made")
    }

    @Test func aNumberTooLargeForACountIsRefusedWithTheOptionAndTheValue() async throws {
        let run = try await folio(["fuzz", "--seeds", "1", "--steps", "99999999999999999999999"])
        #expect(run.status == 2, "\(run.output)\(run.errors)")
        #expect(run.errors.contains("'99999999999999999999999'"), "\(run.errors)")
        #expect(run.errors.contains("--steps"), "\(run.errors)")
        #expect(run.output.isEmpty)
    }

    @Test func theLargestCountsAreAccepted() async throws {
        // At the top of its range, a count runs (and the help says the range).
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-bounds-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: work) }
        let exercise = try await folio(["log", "exercise", "--edits", "1", "--directory", work.path])
        #expect(exercise.status == 0, "\(exercise.errors)")
        let help = try await folio(["fuzz", "--help"])
        let flat = help.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flat.contains("1...100000"), "--steps gives its range: \(help.output)")
        #expect(flat.contains("1...256"), "--jobs gives its range: \(help.output)")
    }
}
