import FolioSimulator
import Foundation

/// `fuzz`: random scenarios with 3 devices and 50 steps, run for a fixed time as `folio fuzz` runs them (each
/// device's library on disk, invariants after every step, a full sync that must converge at the end), as many at
/// once as there are cores. Reports how many complete per minute and how many broke an invariant, and the CPU time
/// a scenario took (user and system, over the run) with how many cores were busy: whether a run was short of CPU
/// or waited on the disk. (On a VM whose CPU slows from one hour to the next, CPU time moves with it: only runs
/// interleaved side by side compare two builds.)
/// `FOLIO_BENCH_SECONDS` sets the time (default 60); seeds start at `FOLIO_BENCH_SEED` (default 1).
enum FuzzBenchmark {
    static func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["FOLIO_BENCH_SECONDS"] ?? "") ?? 60
        let firstSeed = UInt64(environment["FOLIO_BENCH_SEED"] ?? "") ?? 1
        let jobs = ProcessInfo.processInfo.activeProcessorCount
        let scratch = try ScratchDirectory("fuzz")
        defer { scratch.cleanUp() }
        let fuzzer = Fuzzer(
            generator: ScenarioGenerator(devices: 3...3, steps: 50), workDirectory: scratch.url, shrinks: false)
        let start = Date()
        let cpuAtStart = cpuSeconds()
        let deadline = start.addingTimeInterval(seconds)
        var next = firstSeed
        var completed = 0
        var violations: [UInt64] = []
        var skipped = 0
        await withTaskGroup(of: Fuzzer.Outcome.self) { group in
            for _ in 0..<jobs {
                let seed = next
                next += 1
                group.addTask { await fuzzer.run(seed: seed) }
            }
            while let outcome = await group.next() {
                completed += 1
                skipped += outcome.skippedSteps
                if !outcome.violations.isEmpty { violations.append(outcome.seed) }
                if Date() < deadline {
                    let seed = next
                    next += 1
                    group.addTask { await fuzzer.run(seed: seed) }
                }
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let perMinute = Double(completed) / elapsed * 60
        let cpu = cpuSeconds()
        let (user, system) = (cpu.user - cpuAtStart.user, cpu.system - cpuAtStart.system)
        let cpuPerScenario = completed > 0 ? (user + system) / Double(completed) * 1000 : 0
        printTable(
            "fuzz: random scenarios, 3 devices, 50 steps, \(jobs) at once, \(format(seconds)) s (\(machineDescription()))",
            [
                ("scenarios completed", "\(completed) (seeds \(firstSeed)...\(firstSeed + UInt64(completed) - 1))"),
                ("elapsed s", format(elapsed, 1)),
                ("scenarios per minute", format(perMinute)),
                (
                    "CPU s (user + system)",
                    "\(format(user, 1)) + \(format(system, 1)) (\(format((user + system) / elapsed, 2)) cores busy)"
                ),
                ("CPU ms per scenario", format(cpuPerScenario, 1)),
                (
                    "violations",
                    violations.isEmpty
                        ? "0"
                        : "\(violations.count) (seeds \(violations.sorted().map(String.init).joined(separator: ", ")))"
                ),
                ("steps skipped as not applicable", "\(skipped) of \(completed * 50)"),
            ])
        printJSON([
            "scenarios_per_min": perMinute.rounded(), "violations": violations.count,
            "cpu_ms_per_scenario": (cpuPerScenario * 10).rounded() / 10,
        ])
    }
}
