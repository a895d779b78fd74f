import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioSync
import FolioTestDoubles
import Foundation

/// One run of a scenario: the devices, the cloud, simulated time, and what has happened so far.
final class ScenarioRun {
    let scenario: Scenario
    let directory: URL
    let options: Simulator
    /// Simulated time, in milliseconds since 1970 (starts at 2026-01-01T00:00:00Z).
    var now: Int64 = ScenarioRun.start
    var devices: [SimulatedDevice] = []
    var cloud: SimulatedCloud!
    let images: ImageBytes
    /// Documents by every name a `create` or `rename` step gave them.
    var documentIDs: [String: DocumentID] = [:]
    /// Every change some device's log has held, per document: what must never go missing.
    var acknowledged: [DocumentID: VersionVector] = [:]
    /// Per device, what its log was last found to hold (see ``checkInvariants(full:)``).
    var verification: [String: VerificationProgress] = [:]
    /// The devices the step running may have changed: their logs are checked after it.
    var touched: Set<String> = []
    /// Events of the step running.
    var events: [String] = []
    /// The steps as they ran, when the run keeps them.
    var steps: [SimulatedStep] = []
    /// The number of the step running (1-based); after the last, the number of steps that ran.
    var stepNumber = 0
    /// How many steps were skipped (``Simulator/StepErrors/skip``).
    var skippedSteps = 0
    var failures: [SimulationFailure] = []
    /// Drawn from for crash points.
    var faults: SplitMix64
    /// Where every device's library and documents do their work, and the run's own task too
    /// (``Simulator/inRunDirectory(_:)``): each awaited call stays on the run's thread.
    let executor: BlockingWorkExecutor

    /// 2026-01-01T00:00:00Z.
    static let start: Int64 = 1_767_225_600_000

    init(scenario: Scenario, directory: URL, options: Simulator, executor: BlockingWorkExecutor) {
        self.scenario = scenario
        self.directory = directory
        self.options = options
        self.executor = executor
        images = ImageBytes(seed: Self.derive(scenario.seed, 3))
        faults = SplitMix64(seed: Self.derive(scenario.seed, 4))
    }

    /// A seed for one purpose, derived from the scenario's (so adding a crash does not change identities).
    static func derive(_ seed: UInt64, _ purpose: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: seed ^ (purpose &* 0x9E37_79B9_7F4A_7C15))
        return generator.next()
    }

    func device(_ name: String) -> SimulatedDevice {
        devices.first { $0.name == name }!
    }

    // MARK: Running

    /// Runs the scenario's steps, keeping each as it ran.
    func run() async -> SimulationResult {
        await run(scenario.steps, keepingSteps: true)
    }

    /// Runs `source`'s steps in place of the scenario's, taking each when its turn comes; with `keepingSteps`, each
    /// is kept as it ran (``SimulationResult/steps``, the report's timeline), otherwise only counted.
    func run(_ source: some Sequence<Scenario.Step>, keepingSteps: Bool) async -> SimulationResult {
        do {
            try await setUp()
        } catch {
            failures.append(SimulationFailure(kind: .setup, step: 0, line: 0, message: error.description))
            return await finish()
        }
        for step in source {
            stepNumber += 1
            let number = stepNumber
            events = []
            touched = Self.devices(touchedBy: step.action)
            if touched.contains("*") { touched = Set(devices.map(\.name)) }
            var failure: String?
            var skipped: String?
            var stop = false
            do {
                let found = try await perform(step.action)
                for message in found {
                    failures.append(
                        SimulationFailure(kind: .expectation, step: number, line: step.line, message: message))
                }
                failure = found.isEmpty ? nil : found.joined(separator: "; ")
                try await checkInvariants()
            } catch let error {
                let kind: SimulationFailure.Kind
                if case .invariant = error { kind = .invariant } else { kind = .step }
                if kind == .step && options.stepErrors == .skip {
                    skipped = error.description
                    events.append("skipped: \(error.description)")
                } else {
                    failures.append(
                        SimulationFailure(kind: kind, step: number, line: step.line, message: error.description))
                    failure = error.description
                    stop = true
                }
            }
            if skipped != nil { skippedSteps += 1 }
            if keepingSteps {
                steps.append(
                    SimulatedStep(
                        number: number, line: step.line, time: Timestamp(millisecondsSince1970: now),
                        action: step.action, of: scenario, events: events, failure: failure, skipped: skipped))
            }
            options.stepCounter?.add()
            if stop { break }
        }
        if !failures.contains(where: { $0.kind != .expectation }) {
            do {
                if options.checksFinalConvergence {
                    try await finalCheck()
                } else {
                    // The steps' checks covered the documents each step moved; the end checks everything, pages too.
                    touched = Set(devices.map(\.name))
                    try await checkInvariants(full: true)
                    try checkFilesAreOwn()
                }
            } catch {
                failures.append(SimulationFailure(kind: .invariant, step: 0, line: 0, message: error.description))
            }
        }
        return await finish()
    }

    private func setUp() async throws(SimulationError) {
        do {
            try options.fileSystem.createDirectories(at: directory)
        } catch {
            throw .step("cannot create the run's directory \(directory.path): \(error)")
        }
        let identities = SeededIdentifierSource(seed: Self.derive(scenario.seed, 1))
        let policy = ConflictPolicy(default: Self.strategy(scenario.strategy))
        for (index, declared) in scenario.devices.enumerated() {
            let skew = declared.clockSkew.milliseconds
            let device = SimulatedDevice(
                name: declared.name, key: DeviceKey(using: identities),
                root: directory.appendingPathComponent(
                    Self.directoryName(ofDevice: declared.name, at: index + 1, named: options.keepsFiles),
                    isDirectory: true),
                clock: ManualClock(start: Timestamp(millisecondsSince1970: now + skew)), skew: skew,
                identifierSeed: Self.derive(scenario.seed, 100 + UInt64(index)), policy: policy,
                fileSystem: options.fileSystem, executor: executor)
            do { try await device.start() } catch { throw .document(error) }
            devices.append(device)
        }
        let network = scenario.network
        let profile = FaultProfile(drop: network.loss, duplicate: network.duplicate, reorder: network.reorder)
        do {
            cloud = try SimulatedCloud(
                key: DeviceKey(using: identities),
                clock: ManualClock(start: Timestamp(millisecondsSince1970: now)), faults: profile,
                seed: Self.derive(scenario.seed, 2))
        } catch {
            throw .store(error)
        }
    }

    /// The name of the directory of the device at `place` (1-based) in the scenario's `devices`: `device-1`, or
    /// `named`, `device-1-iPad`. The place keeps names apart; the device's name, the scenario's text, is reduced to
    /// letters, digits, `-`, `_` and `.` (anything else, `/` and controls included, becomes `_`) and 40 of them at
    /// most, so that it never leads outside the run's directory or prints as anything but itself.
    static func directoryName(ofDevice name: String, at place: Int, named: Bool) -> String {
        guard named else { return "device-\(place)" }
        var safe = String.UnicodeScalarView()
        for scalar in name.unicodeScalars.prefix(40) {
            let kept =
                scalar.isASCII
                ? (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_.".unicodeScalars.contains(scalar))
                : (scalar.properties.isAlphabetic || scalar.properties.generalCategory == .decimalNumber)
            safe.append(kept ? scalar : "_")
        }
        return "device-\(place)-\(String(safe))"
    }

    /// The devices an action may change ("*": every device).
    static func devices(touchedBy action: Scenario.Action) -> Set<String> {
        switch action {
        case .create(let device, _, _, _, _), .edit(let device, _, _), .undo(let device, _), .redo(let device, _),
            .save(let device, _), .close(let device, _), .open(let device, _), .rename(let device, _, _),
            .delete(let device, _), .move(let device, _, _), .writeFile(let device, _, _),
            .importFile(let device, _, _, _), .crash(let device, _), .restart(let device), .resolve(let device, _, _),
            .restore(let device, _, _), .markVersion(let device, _, _):
            [device]
        case .wait: ["*"]
        case .sync, .offline, .online, .partition, .heal, .expect: []
        }
    }

    static func strategy(_ strategy: Scenario.Strategy) -> ConflictStrategy {
        switch strategy {
        case .askUser: .askUser
        case .latestWins: .latestWins
        case .merge: .merge
        case .keepBoth: .keepBoth
        }
    }

    /// Moves simulated time forward; every device's clock follows (with its skew).
    func advance(by milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        now += milliseconds
        for device in devices { device.setTime(now) }
        cloud.clock.set(Timestamp(millisecondsSince1970: now))
    }

    private func finish() async -> SimulationResult {
        let report = await makeReport()
        for device in devices { device.kill() }
        cloud?.close()
        var result = SimulationResult(
            scenario: scenario, steps: steps, stepsRun: stepNumber, stepsSkipped: skippedSteps, failures: failures,
            report: report)
        if options.keepsFiles {
            result.deviceDirectories = Dictionary(
                devices.map { ($0.name, $0.root) }, uniquingKeysWith: { first, _ in first })
        }
        return result
    }

    // MARK: Documents by name

    /// The document `name` names on `device`: the one a step created or renamed to that name, or a document the
    /// device's library shows under that name (a keep-both copy, say).
    func documentID(_ name: String, on device: SimulatedDevice) throws(SimulationError) -> DocumentID {
        let library = try device.runningLibrary()
        do {
            if let id = documentIDs[name], try library.catalogInfo(of: id) != nil { return id }
            let all = try library.catalog(includingDeleted: true).filter { $0.displayName == name }
            if let found = all.first(where: { !$0.isDeleted }) ?? all.first { return found.id }
        } catch {
            throw .document(error)
        }
        if documentIDs[name] != nil {
            throw .step("\(device.name) does not have \(name) yet: it has not synced since \(name) was created")
        }
        throw .step("\(device.name) has no document named \(name)")
    }
}
