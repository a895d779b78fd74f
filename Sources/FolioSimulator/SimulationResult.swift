import FolioCore
import FolioReports
import Foundation

/// What went wrong in a run, and where.
public struct SimulationFailure: Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Hashable, Sendable {
        /// An `expect` step found something else.
        case expectation
        /// A step could not be done as written (a device that is down, a position past the end…).
        case step
        /// An invariant broke: a log unsound, devices that synced fully but differ, an acknowledged change lost.
        /// Always a bug in Folio (or the simulator), never in the scenario.
        case invariant
        /// The run could not start (no temporary directory, a store that would not open).
        case setup
    }

    /// The kind.
    public var kind: Kind
    /// The step's 1-based number; 0 for the run's setup and for the final check.
    public var step: Int
    /// The step's line in the scenario file; 0 when unknown.
    public var line: Int
    /// What was expected and what was found, or what went wrong.
    public var message: String

    /// Creates a failure.
    public init(kind: Kind, step: Int, line: Int, message: String) {
        self.kind = kind
        self.step = step
        self.line = line
        self.message = message
    }

    /// Where the run was: `step 4`, `setup` or `final check`.
    public var place: String {
        step == 0 ? (kind == .setup ? "setup" : "final check") : "step \(step)"
    }

    /// `step 4 (line 12): expected text "a", found "b"`.
    public var description: String {
        "\(place)\(line > 0 ? " (line \(line))" : ""): \(message)"
    }
}

/// One step as it ran: when, what it did, and what came of it.
public struct SimulatedStep: Hashable, Sendable {
    /// The 1-based step number.
    public var number: Int
    /// The line in the scenario file (0 for a step made in code).
    public var line: Int
    /// Simulated time when the step ran.
    public var time: Timestamp
    /// The step as the scenario file writes it.
    public var action: String {
        get { text.written }
        set { text = .written(newValue) }
    }
    /// What happened: syncs, conflicts appearing and resolved, crashes, recoveries.
    public var events: [String]
    /// Why it failed, if it did.
    public var failure: String?
    /// Why it was skipped (it could not be done, and the run skips such steps), if it was.
    public var skipped: String?
    /// The action, written out only when asked for: most runs (fuzzing's passing ones) never read it.
    private var text: ActionText

    init(
        number: Int, line: Int, time: Timestamp, action: Scenario.Action, of scenario: Scenario, events: [String],
        failure: String?, skipped: String?
    ) {
        self.number = number
        self.line = line
        self.time = time
        self.text = .unwritten(action, scenario)
        self.events = events
        self.failure = failure
        self.skipped = skipped
    }

    /// Equal when every field is, the action as written.
    public static func == (lhs: SimulatedStep, rhs: SimulatedStep) -> Bool {
        (lhs.number, lhs.line, lhs.time, lhs.events, lhs.failure, lhs.skipped)
            == (rhs.number, rhs.line, rhs.time, rhs.events, rhs.failure, rhs.skipped)
            && lhs.action == rhs.action
    }

    /// Hashes every field, the action as written.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number)
        hasher.combine(line)
        hasher.combine(time)
        hasher.combine(action)
        hasher.combine(events)
        hasher.combine(failure)
        hasher.combine(skipped)
    }

    private enum ActionText: Sendable {
        case written(String)
        case unwritten(Scenario.Action, Scenario)

        var written: String {
            switch self {
            case .written(let text): text
            case .unwritten(let action, let scenario): scenario.yamlLine(of: action)
            }
        }
    }
}

/// The outcome of running one scenario.
public struct SimulationResult: Sendable {
    /// The scenario that ran.
    public var scenario: Scenario
    /// Every step, in order (the steps after a failed step or a broken invariant did not run); empty for a run
    /// that does not keep its steps (``Simulator/run(_:streaming:)``).
    public var steps: [SimulatedStep]
    /// How many steps ran.
    public var stepsRun: Int
    /// How many of them were skipped, as they could not be done (``Simulator/StepErrors/skip``).
    public var stepsSkipped: Int
    /// What failed; empty when every expectation held and every invariant too.
    public var failures: [SimulationFailure]
    /// The conflict-inspection report of the run.
    public var report: ConflictReport
    /// Each device's library directory, by the device's name, when the run's files are kept
    /// (``Simulator/keepsFiles``); empty otherwise, as the directories are gone.
    public var deviceDirectories: [String: URL] = [:]

    /// Whether every expectation and every invariant held.
    public var passed: Bool { failures.isEmpty }
    /// The failures that are invariant violations (bugs).
    public var violations: [SimulationFailure] { failures.filter { $0.kind == .invariant } }
}
