import FolioFiles
import Foundation

/// Runs random scenarios (``ScenarioGenerator``) and checks the invariants: every log sound after every step and,
/// after healing, restarting and syncing everything, every device holding the same changes and contents with no
/// acknowledged change lost. A failing scenario is shrunk (``ScenarioShrinker``) to a small one that fails the same
/// way.
public struct Fuzzer: Sendable {
    /// What one seed gave.
    public struct Outcome: Sendable {
        /// The seed.
        public var seed: UInt64
        /// The scenario generated from it: whole when an invariant broke; otherwise without its steps, which were
        /// made as they ran and not kept (``ScenarioGenerator/scenario(seed:)`` makes them again).
        public var scenario: Scenario
        /// The invariants it broke (empty: it held).
        public var violations: [SimulationFailure]
        /// The smallest scenario found that still breaks an invariant, when one broke. It ends with the final check
        /// written out (heal, restart, online, `sync: all`, `expect: {converged: true, lostChanges: 0}`), and has no
        /// step that does not apply, so `folio replay` reproduces it.
        public var shrunk: Scenario?
        /// Steps that could not be done as generated (skipped, not failures).
        public var skippedSteps: Int
    }

    /// The scenarios' shape.
    public var generator: ScenarioGenerator
    /// Where runs put their device directories (`nil`: the system's temporary directory).
    public var workDirectory: URL?
    /// Whether failures are shrunk.
    public var shrinks: Bool
    /// Counts the steps of every seed's run (not of shrinking), if given: for progress while a long scenario runs.
    public var stepCounter: StepCounter?
    /// The file system runs work on (see ``Simulator/fileSystem``).
    public let fileSystem: any FileSystem
    /// The run directories every run of this fuzzer (and of its copies) reuses.
    private let runDirectories: RunDirectories

    /// Creates a fuzzer.
    public init(
        generator: ScenarioGenerator = ScenarioGenerator(), workDirectory: URL? = nil, shrinks: Bool = true,
        fileSystem: any FileSystem = PosixFileSystem(synchronizes: false)
    ) {
        self.generator = generator
        self.workDirectory = workDirectory
        self.shrinks = shrinks
        self.fileSystem = fileSystem
        runDirectories = RunDirectories(fileSystem: fileSystem)
    }

    /// The simulator fuzzing uses: steps that do not apply are skipped, and the run ends with a full sync that must
    /// converge.
    public var simulator: Simulator {
        var simulator = Simulator(
            workDirectory: workDirectory, stepErrors: .skip, checksFinalConvergence: true, makesReport: false,
            fileSystem: fileSystem)
        simulator.runDirectories = runDirectories
        return simulator
    }

    /// Generates the scenario of `seed`, runs it, and shrinks it if it broke an invariant.
    ///
    /// The steps are made as they run and not kept (``Simulator/run(_:streaming:)``), so a long scenario runs in
    /// memory bounded by what its devices hold; one that broke an invariant is made again whole to be shrunk.
    public func run(seed: UInt64) async -> Outcome {
        let (setting, steps) = generator.stream(seed: seed)
        let simulator = simulator
        var counted = simulator
        counted.stepCounter = stepCounter
        let result = await counted.run(setting, streaming: steps)
        var outcome = Outcome(
            seed: seed, scenario: setting, violations: result.violations, shrunk: nil,
            skippedSteps: result.stepsSkipped)
        guard !outcome.violations.isEmpty else { return outcome }
        let scenario = generator.scenario(seed: seed)
        outcome.scenario = scenario
        if shrinks {
            // The same run again, whole (the run is a function of the scenario), to know which steps it skipped.
            let skippedSteps = Set(
                await simulator.run(scenario).steps.filter { $0.skipped != nil }.map { $0.number - 1 })
            // What replay reproduces: the steps that applied, then the final check as steps.
            var replayable = scenario
            replayable.steps = scenario.steps.indices.filter { !skippedSteps.contains($0) }.map { scenario.steps[$0] }
            let closing = Self.finalCheck(after: replayable)
            replayable.steps += closing
            var replay = Simulator(workDirectory: workDirectory, makesReport: false, fileSystem: fileSystem)
            replay.runDirectories = runDirectories
            func failsInReplay(_ candidate: Scenario) async -> Bool {
                let failures = await replay.run(candidate).failures
                return !failures.isEmpty && !failures.contains { $0.kind == .step || $0.kind == .setup }
            }
            var shrunk: Scenario
            if await failsInReplay(replayable) {
                shrunk = await ScenarioShrinker().shrink(replayable, keeping: closing.count) { await failsInReplay($0) }
            } else {
                // Only candidates a scenario file can hold: dropping a restart must not leave a step on a crashed
                // device, which `folio replay` would refuse to read.
                shrunk = await ScenarioShrinker().shrink(scenario) {
                    (try? ScenarioParser.parse(yaml: $0.yaml, file: "shrunk.yaml")) != nil
                        ? await !simulator.run($0).violations.isEmpty : false
                }
                shrunk.description =
                    "Reproduces with folio fuzz's checks (steps that do not apply are skipped), not with replay."
            }
            shrunk.name = "Shrunk from random scenario \(seed)"
            outcome.shrunk = shrunk
        }
        return outcome
    }

    /// The final check as steps: heal, restart the devices down at the end, bring every device online, sync
    /// everything, and expect convergence with nothing lost.
    static func finalCheck(after scenario: Scenario) -> [Scenario.Step] {
        var down: [String] = []
        for step in scenario.steps {
            switch step.action {
            case .crash(let device, _): if !down.contains(device) { down.append(device) }
            case .restart(let device): down.removeAll { $0 == device }
            default: break
            }
        }
        let all = scenario.devices.map(\.name)
        return [Scenario.Step(.heal)] + down.map { Scenario.Step(.restart(device: $0)) }
            + [
                Scenario.Step(.online(all)), Scenario.Step(.sync(.all)),
                Scenario.Step(.expect(Scenario.Expectation(converged: true, lostChanges: 0))),
            ]
    }
}
