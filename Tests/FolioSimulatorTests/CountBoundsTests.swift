import ArgumentParser
import FolioTestWorkPool
import Testing

@testable import folio

/// Every count the tool takes is accepted at both ends of its range and refused one past either end, when the
/// arguments are parsed (and validated), before anything runs.
@Suite(.workPool) struct CountBoundsTests {
    /// Whether `arguments` parse and validate as `Command`.
    func accepts<Command: ParsableCommand>(_ command: Command.Type, _ arguments: [String]) -> Bool {
        (try? Command.parse(arguments)) != nil
    }

    @Test func fuzzCountsAtTheirBounds() {
        let seeds = "1...\(CountBounds.seeds.upperBound)"
        let top = [
            "--seeds", seeds, "--steps", "\(CountBounds.steps.upperBound)", "--jobs", "\(CountBounds.jobs.upperBound)",
            "--devices", "\(CountBounds.devices.upperBound)",
        ]
        #expect(accepts(FuzzCommand.self, top))
        #expect(accepts(FuzzCommand.self, ["--seeds", "1", "--steps", "1", "--jobs", "1", "--devices", "1"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "0...\(CountBounds.seeds.upperBound)"]), "one seed too many")
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--steps", "\(CountBounds.steps.upperBound + 1)"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--steps", "0"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--jobs", "\(CountBounds.jobs.upperBound + 1)"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--jobs", "0"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--devices", "\(CountBounds.devices.upperBound + 1)"]))
        #expect(!accepts(FuzzCommand.self, ["--seeds", "1", "--devices", "0"]))
    }

    @Test func logDriverCountsAtTheirBounds() {
        let store = ["--store", "/nonexistent/store.sqlite"]
        let count = CountBounds.appendCount.upperBound
        let batch = CountBounds.batch.upperBound
        #expect(accepts(LogAppendCommand.self, store + ["--count", "\(count)", "--batch", "\(batch)"]))
        #expect(accepts(LogAppendCommand.self, store + ["--count", "0", "--batch", "1"]))
        #expect(!accepts(LogAppendCommand.self, store + ["--count", "\(count + 1)"]))
        #expect(!accepts(LogAppendCommand.self, store + ["--batch", "\(batch + 1)"]))
        #expect(!accepts(LogAppendCommand.self, store + ["--batch", "0"]))
        let sync = store + ["--folder", "/nonexistent/folder"]
        let rounds = CountBounds.rounds.upperBound
        let append = CountBounds.appendPerRound.upperBound
        #expect(accepts(LogSyncCommand.self, sync + ["--rounds", "\(rounds)", "--append", "\(append)"]))
        #expect(!accepts(LogSyncCommand.self, sync + ["--rounds", "\(rounds + 1)"]))
        #expect(!accepts(LogSyncCommand.self, sync + ["--rounds", "0"]))
        #expect(!accepts(LogSyncCommand.self, sync + ["--append", "\(append + 1)"]))
        let edits = CountBounds.edits.upperBound
        #expect(accepts(LogExerciseCommand.self, ["--edits", "\(edits)"]))
        #expect(!accepts(LogExerciseCommand.self, ["--edits", "\(edits + 1)"]))
        #expect(!accepts(LogExerciseCommand.self, ["--edits", "0"]))
    }
}
