import FolioCore
import FolioFiles
import FolioStore
import Foundation

/// Runs scenarios on real libraries: each device has its own ``FolioDocuments/DocumentLibrary`` on disk (in a
/// temporary directory), its own clock with the scenario's skew, its own identities and its own file I/O, and the
/// devices sync through a simulated cloud over a network with the scenario's latency, loss, duplication and
/// reordering.
///
/// A run is reproduced exactly by the scenario and its seed: every random choice (identities, faults, crash points,
/// image bytes) derives from the seed, and time moves only through `wait` steps and network latency.
///
/// After every step the run checks the log invariants of every running device; after a sync of every running,
/// online device of a group, that they converged; and, with no partition and no device down, that no change any
/// device acknowledged is missing.
public struct Simulator: Sendable {
    /// What a run does when a step cannot be done as written.
    public enum StepErrors: Sendable {
        /// The run fails there (`folio replay`: the scenario says something that did not happen).
        case fail
        /// The step is recorded as skipped and the run goes on (fuzzing: random steps often do not apply).
        case skip
    }

    /// Where runs put their device directories; `nil`: a new temporary directory per run.
    public var workDirectory: URL?
    /// Whether device directories are kept after a run (to inspect them with `folio inspect`). Kept directories are
    /// named after their devices (`device-1-iPad`), and the result says where each is
    /// (``SimulationResult/deviceDirectories``).
    public var keepsFiles: Bool
    /// What a step that cannot be done does to the run.
    public var stepErrors: StepErrors
    /// Whether, after the last step, the run heals partitions, restarts crashed devices, brings every device
    /// online, syncs everything and requires convergence and no lost change (what fuzzing checks).
    public var checksFinalConvergence: Bool
    /// Whether the run ends by capturing every device's documents into its report; without, the report holds the
    /// timeline and the outcome only (fuzzing needs no more until something fails).
    public var makesReport: Bool
    /// Counts every step of every run of this simulator (and of its copies), if given.
    public var stepCounter: StepCounter?
    /// Every file call of a run: its directories, the files another program writes, and each device's library
    /// (which wraps it in a fault injector of its own, to crash the device during a save).
    public let fileSystem: any FileSystem
    /// The emptied run directories this simulator (and its copies) reuse.
    var runDirectories: RunDirectories

    /// Creates a simulator.
    ///
    /// - Parameter fileSystem: the file system runs work on; by default the real one without `fsync`, as a
    ///   simulated crash kills the process, not the machine, and what was written survives it without one.
    public init(
        workDirectory: URL? = nil, keepsFiles: Bool = false, stepErrors: StepErrors = .fail,
        checksFinalConvergence: Bool = false, makesReport: Bool = true,
        fileSystem: any FileSystem = PosixFileSystem(synchronizes: false)
    ) {
        self.workDirectory = workDirectory
        self.keepsFiles = keepsFiles
        self.stepErrors = stepErrors
        self.checksFinalConvergence = checksFinalConvergence
        self.makesReport = makesReport
        self.fileSystem = fileSystem
        runDirectories = RunDirectories(fileSystem: fileSystem)
    }

    /// Runs `scenario` to its end (or its first step error or broken invariant).
    public func run(_ scenario: Scenario) async -> SimulationResult {
        await inRunDirectory { directory, executor in
            await ScenarioRun(scenario: scenario, directory: directory, options: self, executor: executor).run()
        }
    }

    /// Runs `scenario` with `steps` in place of its own, taking each step when its turn comes and keeping none, so
    /// that a scenario too long to hold runs in bounded memory (with ``ScenarioGenerator/stream(seed:)``): the
    /// result counts the steps (``SimulationResult/stepsRun``) but has none in ``SimulationResult/steps``, nor in
    /// its report's timeline. Otherwise the run is the one ``run(_:)`` makes of the scenario with those steps.
    public func run(_ scenario: Scenario, streaming steps: some Sequence<Scenario.Step>) async -> SimulationResult {
        await inRunDirectory { directory, executor in
            await ScenarioRun(scenario: scenario, directory: directory, options: self, executor: executor)
                .run(steps, keepingSteps: false)
        }
    }

    /// Runs `body` in a run directory: a new one when files are kept, where they stay; otherwise one emptied for the
    /// next run afterwards (see ``RunDirectories``). `body` runs on one serial executor of the run's own, which it
    /// hands to every device's library (`DocumentLibrary.workExecutor`): the run's task, its devices' documents
    /// and stores do their work on one thread, and an awaited call moves to no other (one run at a time per
    /// executor; runs at once each have their own).
    private func inRunDirectory(
        _ body: (URL, BlockingWorkExecutor) async -> SimulationResult
    ) async -> SimulationResult {
        let parent = workDirectory ?? FileManager.default.temporaryDirectory
        let directory = keepsFiles ? RunDirectories.newDirectory(in: parent) : runDirectories.take(in: parent)
        defer {
            if !keepsFiles { runDirectories.giveBack(directory, in: parent) }
        }
        let executor = BlockingWorkExecutor(label: "folio.simulation")
        defer { withExtendedLifetime(executor) {} }
        return await withTaskExecutorPreference(executor) { await body(directory, executor) }
    }
}
