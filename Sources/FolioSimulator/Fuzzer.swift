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
        /// The scenario generated from it.
        public var scenario: Scenario
        /// The invariants it broke (empty: it held).
        public var violations: [SimulationFailure]
        /// The smallest scenario found that still breaks an invariant, when one broke.
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

    /// Creates a fuzzer.
    public init(generator: ScenarioGenerator = ScenarioGenerator(), workDirectory: URL? = nil, shrinks: Bool = true) {
        self.generator = generator
        self.workDirectory = workDirectory
        self.shrinks = shrinks
    }

    /// The simulator fuzzing uses: steps that do not apply are skipped, and the run ends with a full sync that must
    /// converge.
    public var simulator: Simulator {
        Simulator(workDirectory: workDirectory, stepErrors: .skip, checksFinalConvergence: true, makesReport: false)
    }

    /// Generates the scenario of `seed`, runs it, and shrinks it if it broke an invariant.
    public func run(seed: UInt64) async -> Outcome {
        let scenario = generator.scenario(seed: seed)
        let simulator = simulator
        let result = await simulator.run(scenario)
        let skipped = result.steps.reduce(0) { $0 + $1.events.filter { $0.hasPrefix("skipped: ") }.count }
        var outcome = Outcome(seed: seed, scenario: scenario, violations: result.violations, shrunk: nil, skippedSteps: skipped)
        if !outcome.violations.isEmpty, shrinks {
            var shrunk = await ScenarioShrinker().shrink(scenario) { candidate in
                await !simulator.run(candidate).violations.isEmpty
            }
            shrunk.name = "Shrunk from random scenario \(seed)"
            outcome.shrunk = shrunk
        }
        return outcome
    }
}
