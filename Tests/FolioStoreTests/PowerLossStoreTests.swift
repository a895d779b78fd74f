import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Power loss at every sync point of appends, ingests, checkpoints and a store's creation (and at a sample of the
/// writes between them), on a disk that keeps only what was synced plus a seeded, torn subset of the rest
/// (``PowerLossDisk``).
///
/// A run copies a closed store into a fresh directory (or starts with none), opens it on the simulated disk and
/// performs a workload, one transaction per step, until the power is cut at a chosen I/O event; the surviving files
/// are then opened again
/// with the ordinary VFS. The recovered store must be sound (`verify()`, SQLite's page check included) and hold
/// exactly what the store held after some prefix of the steps: with `Durability.full` at least every step that
/// returned (the one under way may or may not have committed); with `.normal` any prefix. The sweep is a fixed
/// table (seeds derive from ``baseSeed``), so the number of crash points it reports is the same on every run.
@Suite(.workPool) struct PowerLossStoreTests {
    /// The seed every run's choice of surviving writes derives from; `FOLIO_SEED` explores others.
    static let baseSeed: UInt64 = ProcessInfo.processInfo.environment["FOLIO_SEED"].flatMap(UInt64.init) ?? 24

    @Test(
        arguments: [
            (PowerLossWorkload.appends, StoreAccess.exclusive), (.appends, .shared),
            (.ingests, .exclusive), (.ingests, .shared),
            (.creation, .exclusive), (.creation, .shared),
            (.folds, .exclusive), (.folds, .shared),
        ], [Durability.full, .normal])
    func everyCrashPointRecoversACommittedPrefix(_ shape: (PowerLossWorkload, StoreAccess), durability: Durability)
        throws
    {
        let sweep = try PowerLossSweep(shape.0, durability: durability, access: shape.1)
        let result = try sweep.run()
        print(result.summary)
        #expect(result.violations.isEmpty, "\(result.summary)\n\(result.violations.prefix(5).joined(separator: "\n"))")
        #expect(result.syncPoints > 0 || durability != .full)
        #expect(result.runs >= result.crashPoints && result.crashPoints > result.syncPoints)
    }

    /// The model is strict enough to catch a store that does not sync: with `Durability.off`, some crash point
    /// loses a change whose append returned (or damages the store).
    @Test func aStoreThatNeverSyncsIsCaught() throws {
        let sweep = try PowerLossSweep(.appends, durability: .off, access: .exclusive, demanding: .full)
        let result = try sweep.run()
        print(result.summary)
        #expect(result.syncPoints == 0)
        #expect(!result.violations.isEmpty, "\(result.summary)")
    }

    /// The disk itself: an unsynced transaction is lost or torn (never half applied), and what was durable before
    /// stays as it was.
    @Test func theDiskKeepsWhatWasSyncedAndTearsTheRest() throws {
        let directory = try TemporaryDirectory()
        let store = directory.file("A.sqlite")
        let device = Device.named("A")
        try ChangeLogStore(at: store, device: device).close()
        let baseline = try Data(contentsOf: store)
        var outcomes: Set<Int> = []
        var sawTornLog = false
        for seed in 0..<UInt64(12) {
            let work = try TemporaryDirectory(inMemory: true)
            try FileManager.default.copyItem(at: store, to: work.file("A.sqlite"))
            let disk = try PowerLossDisk(modeling: work.url, cutAt: nil, seed: seed)
            let opened = try ChangeLogStore(at: work.file("A.sqlite"), device: device, access: .exclusive)
            // One transaction, never synced with `.normal` (SQLite syncs the log only at checkpoints).
            try opened.append(
                (0..<40).map { Fixtures.edit("edit \($0) " + String(repeating: "x", count: 300)) },
                to: Fixtures.document)
            let survivors = try TemporaryDirectory(inMemory: true)
            try disk.materialize(into: survivors.url)
            #expect(try Data(contentsOf: survivors.file("A.sqlite")) == baseline)
            let written = try Data(contentsOf: work.file("A.sqlite-wal"))
            if let log = try? Data(contentsOf: survivors.file("A.sqlite-wal")), !log.isEmpty, log != written {
                sawTornLog = true
            }
            let recovered = try ChangeLogStore(at: survivors.file("A.sqlite"), device: device, access: .exclusive)
            #expect(try recovered.verify().isSound)
            outcomes.insert(try recovered.changeCount())
            withExtendedLifetime(opened) {}
        }
        #expect(outcomes.isSubset(of: [0, 40]))
        #expect(outcomes.contains(0))
        #expect(sawTornLog)
    }
}

/// A sequence of store operations, one transaction each, run on a store that a power cut may interrupt.
enum PowerLossWorkload: String, CustomStringConvertible, CaseIterable {
    /// Local appends to two documents (one at a time and in a batch), a blob and a checkpoint, a close (which folds
    /// the write-ahead log into the database file and deletes it), a reopen and more appends on the new log.
    case appends
    /// Changes of three devices received in batches out of causal order (some wait, later batches release them),
    /// a local merge, a checkpoint, a close, a reopen and a last batch.
    case ingests
    /// A store made where there was none (its first image written beside SQLite), then appends, a close, a reopen
    /// and an append.
    case creation
    /// Appends folded into a segment keeping a tail, more appends, a fold that rewrites the segment with them, a
    /// close (which folds what is left), a reopen and an append made on the folded log.
    case folds

    var description: String { rawValue }

    /// One step: what it does, performed on the run's store (which a step may close and reopen).
    struct Step {
        var name: String
        var perform: (inout ChangeLogStore?, () throws -> ChangeLogStore) throws -> Void
    }

    /// The steps, given the history the ingests deliver.
    func steps(history: SampleHistory) -> [Step] {
        let document = Fixtures.document
        let other = Fixtures.otherDocument
        func append(_ text: String, to document: DocumentID) -> Step {
            Step(name: "append \(text)") { store, _ in _ = try store!.append(Fixtures.edit(text), to: document) }
        }
        let checkpoint = Step(name: "checkpoint") { store, _ in
            try store!.checkpoints.save(of: document, at: store!.vector(of: document), contents: Data("snapshot".utf8))
        }
        let closeAndReopen = Step(name: "close and reopen") { store, open in
            try store!.close()
            store = nil
            store = try open()
        }
        switch self {
        case .appends:
            return [
                append("first", to: document),
                append("second", to: document),
                append("elsewhere", to: other),
                Step(name: "append a batch of 3") { store, _ in
                    _ = try store!.append((1...3).map { Fixtures.edit("batch \($0)") }, to: document)
                },
                append(String(repeating: "long ", count: 900), to: other),
                Step(name: "put a blob") { store, _ in
                    _ = try store!.checkpoints.putBlob(Data(repeating: 7, count: 5000))
                },
                checkpoint,
                closeAndReopen,
                append("after reopening", to: document),
                append("last", to: other),
            ]
        case .ingests:
            func ingest(_ names: [String]) -> Step {
                Step(name: "ingest \(names.joined(separator: " "))") { store, _ in
                    _ = try store!.ingest(trusting: names.map { history[$0] })
                }
            }
            return [
                ingest(["c1", "c2"]),  // wait for a1
                ingest(["a1"]),  // releases c1 and c2
                ingest(["b2", "a3"]),  // b2 waits for b1 and a2
                ingest(["a2", "b1"]),  // releases b2
                append("local merge", to: document),
                checkpoint,
                ingest(["a4", "c3"]),
                closeAndReopen,
                ingest(["b3"]),
            ]
        case .folds:
            func fold(keeping tail: Int) -> Step {
                Step(name: "fold keeping \(tail)") { store, _ in _ = try store!.fold(document, keepingNewest: tail) }
            }
            return [
                Step(name: "append a batch of 30") { store, _ in
                    _ = try store!.append((1...30).map { Fixtures.edit("batch \($0)") }, to: document)
                },
                append("elsewhere", to: other),
                fold(keeping: 5),
                Step(name: "append a batch of 20") { store, _ in
                    _ = try store!.append((1...20).map { Fixtures.edit("more \($0)") }, to: document)
                },
                fold(keeping: 0),
                closeAndReopen,
                append("after reopening", to: document),
            ]
        case .creation:
            return [
                append("first", to: document),
                append("elsewhere", to: other),
                checkpoint,
                closeAndReopen,
                append("after reopening", to: document),
            ]
        }
    }
}

/// What a store holds, as the power-loss checks compare it: per document, the changes in the log and waiting (by
/// identity and hash) and the latest checkpoint's vector.
struct StoreContents: Equatable, CustomStringConvertible {
    struct Log: Equatable {
        var applied: [ChangeID: ChangeHash]
        var pending: [ChangeID: ChangeHash]
        var checkpoint: VersionVector?
    }

    var logs: [DocumentID: Log]

    init(reading store: ChangeLogStore) throws {
        logs = [:]
        for document in try store.documents() {
            logs[document] = Log(
                applied: Dictionary(uniqueKeysWithValues: try store.changes(of: document).map { ($0.id, $0.hash) }),
                pending: Dictionary(
                    uniqueKeysWithValues: try store.pendingChanges(of: document).map { ($0.id, $0.hash) }),
                checkpoint: try store.checkpoints.latest(of: document)?.vector)
        }
    }

    /// Such as "0f0110d0…: 5 in the log (A:1…4, B:1), 1 waiting, checkpoint".
    var description: String {
        logs.keys.sorted().map { document in
            let log = logs[document]!
            let devices = Dictionary(grouping: log.applied.keys, by: \.device)
                .map { device, ids in
                    "\(device.description.prefix(8)):\(ids.map(\.seq).sorted().map(String.init).joined(separator: ","))"
                }
                .sorted().joined(separator: " ")
            return
                "\(document.description.prefix(8))…: \(log.applied.count) in the log (\(devices)), \(log.pending.count) waiting"
                + (log.checkpoint == nil ? "" : ", checkpoint")
        }.joined(separator: "; ")
    }
}

/// A sweep: one dry run to list the I/O events of a workload, then a run cut at each sync point (two seeds each)
/// and at every few writes, truncations and deletions (one seed each).
struct PowerLossSweep {
    struct Result {
        var name: String
        /// Distinct I/O events the power was cut at, and how many of them were syncs.
        var crashPoints = 0
        var syncPoints = 0
        /// Runs: each crash point with each of its seeds.
        var runs = 0
        var events = 0
        /// Crash points past the end of a run that did fewer I/O events than the dry run (none so far).
        var unreached = 0
        var violations: [String] = []

        var summary: String {
            "power loss, \(name): \(crashPoints) crash points swept (\(syncPoints) at syncs) of \(events) I/O events, "
                + "\(runs) runs, \(violations.count) violations" + (unreached == 0 ? "" : ", \(unreached) not reached")
        }
    }

    let workload: PowerLossWorkload
    let durability: Durability
    let access: StoreAccess
    /// The durability whose promise is checked (the store's own, unless a test checks a weaker store against a
    /// stronger promise to prove that the model catches it).
    let promise: Durability
    private var baseline: TemporaryDirectory { Self.start.directory }
    private var history: SampleHistory { Self.start.history }
    private let device = Device.named("Receiver")
    private static let storeName = "Receiver.sqlite"
    /// Writes and the like between two sampled crash points.
    private static let writeStride = 4

    init(
        _ workload: PowerLossWorkload, durability: Durability, access: StoreAccess, demanding promise: Durability? = nil
    ) throws {
        self.workload = workload
        self.durability = durability
        self.access = access
        self.promise = promise ?? durability
        _ = try Self.startResult.get()
    }

    /// The history the ingests deliver, and the store every run starts from: made, with one change, and closed (one
    /// file, durable). Made once for every sweep.
    private struct Start: Sendable {
        var directory: TemporaryDirectory
        var history: SampleHistory
    }

    private static let startResult = Swift.Result { () throws -> Start in
        let directory = try TemporaryDirectory()
        let history = try SampleHistory.make(in: directory)
        let store = try ChangeLogStore(
            at: directory.file(storeName), device: Device.named("Receiver"), clock: Fixtures.clock())
        try store.append(Fixtures.edit("before"), to: Fixtures.document)
        try store.close()
        return Start(directory: directory, history: history)
    }

    private static var start: Start { try! startResult.get() }

    func run() throws -> Result {
        var result = Result(name: "\(workload), \(durability), \(access)")
        let reference = try perform(cutAt: nil, seed: 0)
        let events = reference.events
        result.events = events.count
        var points: [(event: Int, seeds: [UInt64])] = []
        var sinceSample = 0
        for (index, event) in events.enumerated() {
            if event == .sync {
                points.append((index, [0, 1]))
            } else {
                sinceSample += 1
                if sinceSample == Self.writeStride || index == events.count - 1 {
                    points.append((index, [0]))
                    sinceSample = 0
                }
            }
        }
        for (event, seeds) in points {
            var reached = false
            for offset in seeds {
                let seed = PowerLossStoreTests.baseSeed &* 0x9E37_79B9 &+ UInt64(event) &* 31 &+ offset
                let run = try perform(cutAt: event, seed: seed)
                guard run.wasCut else {
                    result.unreached += 1
                    continue
                }
                result.runs += 1
                reached = true
                if let problem = check(run, against: reference.states) {
                    let kind = run.events.last.map { "\($0)" } ?? "?"
                    result.violations.append(
                        "cut at event \(event) (\(kind)), seed \(seed), after \(run.acknowledged) steps: \(problem)")
                }
            }
            if reached {
                result.crashPoints += 1
                if events[event] == .sync { result.syncPoints += 1 }
            }
        }
        return result
    }

    private struct Run {
        var events: [PowerLossDisk.Event]
        var wasCut: Bool
        /// Steps that returned before the cut.
        var acknowledged: Int
        /// What the store held at the start and after each step (dry run only).
        var states: [StoreContents]
        /// The recovered store's contents, or what went wrong in recovering it (cut runs only).
        var recovered: Swift.Result<StoreContents, any Error>?
        var report: VerificationReport?
    }

    private func perform(cutAt: Int?, seed: UInt64) throws -> Run {
        let work = try TemporaryDirectory(inMemory: true)
        if workload != .creation {
            try FileManager.default.copyItem(at: baseline.file(Self.storeName), to: work.file(Self.storeName))
        }
        let disk = try PowerLossDisk(modeling: work.url, cutAt: cutAt, seed: seed)
        let open = { () throws -> ChangeLogStore in
            try ChangeLogStore(
                at: work.file(Self.storeName), device: device, clock: Fixtures.clock(), durability: durability,
                access: access)
        }
        var acknowledged = 0
        var states: [StoreContents] = []
        do {
            var store: ChangeLogStore? = try open()
            if cutAt == nil { states.append(try StoreContents(reading: store!)) }
            for step in workload.steps(history: history) {
                try step.perform(&store, open)
                acknowledged += 1
                if cutAt == nil { states.append(try StoreContents(reading: store!)) }
            }
            try store?.close()
        } catch  where disk.isCut {
            // The power went: the store's calls fail from the cut on.
        }
        var run = Run(events: disk.events, wasCut: disk.isCut, acknowledged: acknowledged, states: states)
        guard disk.isCut else { return run }
        let survivors = try TemporaryDirectory(inMemory: true)
        try disk.materialize(into: survivors.url)
        var report: VerificationReport?
        run.recovered = Swift.Result {
            // Recovery is SQLite's own; syncing what it folds back would only cost time.
            let store = try ChangeLogStore(
                at: survivors.file(Self.storeName), device: device, clock: Fixtures.clock(), durability: .off,
                access: .exclusive)
            report = try store.verify()
            return try StoreContents(reading: store)
        }
        run.report = report
        return run
    }

    /// What is wrong with a recovered store, or `nil`.
    private func check(_ run: Run, against states: [StoreContents]) -> String? {
        let contents: StoreContents
        switch run.recovered {
        case .success(let value): contents = value
        case .failure(let error): return "the surviving files do not open: \(error)"
        case nil: return "nothing was recovered"
        }
        if let report = run.report, !report.isSound { return "unsound: \(report)" }
        // With `.full` every step that returned is there; the one under way may have committed or not.
        let lowest = promise == .full ? run.acknowledged : 0
        let highest = min(run.acknowledged + 1, states.count - 1)
        guard !(lowest...max(lowest, highest)).contains(where: { $0 < states.count && states[$0] == contents }) else {
            return nil
        }
        let prefix =
            states.firstIndex(of: contents).map { "the state after step \($0)" }
            ?? "no state any prefix of the steps left"
        return "recovered \(contents), which is \(prefix); expected the state after step \(lowest)…\(highest)"
    }
}
