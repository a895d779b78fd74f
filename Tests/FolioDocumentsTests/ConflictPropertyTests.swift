import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Conflict detection as properties over random histories: every delivery order shows every device the same
/// versions, detection agrees with happens-before computed from the whole history, two busy writers never make more
/// than two versions, and a skewed clock changes only what latest-wins picks.
///
/// Each test prints its seed; `FOLIO_SEED=<seed> swift test --filter ConflictPropertyTests` replays a failure.
@Suite(.workPool) struct ConflictPropertyTests {
    // MARK: Delivery orders

    /// "For 2 and 3 devices and small histories, every delivery order gives every device the same current
    /// version, the same set of unresolved versions and, after resolution, the same contents."
    @Test(arguments: [2, 3])
    func everyDeliveryOrderShowsTheSameVersions(devices: Int) async throws {
        let seed = TestSeed.make("everyDeliveryOrderShowsTheSameVersions(\(devices) devices)")
        var random = SplitMix64(seed: seed)
        // Two small histories delivered in all their orders, one larger in a hundred shuffled ones.
        for (trial, edits) in [(0, 4...4), (1, 5...5), (2, 7...8)] {
            let context = "seed \(seed), \(devices) devices, history \(trial)"
            let shared = try await SharedText.make(devices: devices)
            let steps = Self.smallHistory(devices: devices, edits: random.int(in: edits), using: &random)
            for step in steps { try await shared.apply(step) }
            let all = try shared.allChanges()
            let baseHashes = Set(shared.base.map(\.hash))
            let delivered = all.filter { !baseHashes.contains($0.hash) }
            let orders =
                delivered.count <= 5
                ? permutations(of: delivered) : (0..<100).map { _ in delivered.shuffled(using: &random) }
            let history = "\(context): \(steps)"

            // Independent expectations for the whole history.
            let oracle = HistoryOracle(all)
            let expected = oracle.versions()
            #expect(oracle.problems.isEmpty, "\(history): \(oracle.problems)")

            let template = try shared.receiverTemplate()
            var reference: VersionSnapshot?
            for (index, order) in orders.enumerated() {
                // The first order is checked more closely, and every fifth order somewhat (a fresh document costs).
                let orderName = order.map(\.id.description).joined(separator: " ")
                // One failing history is enough to read.
                guard
                    let received = try await Self.receive(
                        shared, from: template, in: order, checkingInvariants: index == 0, closely: index % 5 == 0,
                        context: "\(history), order \(orderName)")
                else { return }
                let sameOnReopening = received.cold.map { $0 == received.incremental } ?? true
                #expect(
                    sameOnReopening,
                    "\(history), order \(orderName): refreshed after each change \(received.incremental), opened at the end \(String(describing: received.cold))"
                )
                if let reference {
                    let same = received.incremental == reference
                    #expect(
                        same, "\(history), order \(orderName): \(received.incremental), first order gave \(reference)")
                    if !same || !sameOnReopening { return }
                } else {
                    reference = received.incremental
                    let asExpected =
                        received.incremental.versions == expected.map(\.id)
                        && received.incremental.texts == expected.map(\.text)
                    #expect(
                        asExpected,
                        "\(history): shows \(received.incremental), the history says \(expected.map { "\($0.id.shortHex) \($0.text.debugDescription)" })"
                    )
                    if !asExpected || !sameOnReopening { return }
                }
            }
            let snapshot = try #require(reference)

            // Each device receives what it lacks in its own shuffled order, refreshing after each change.
            for device in 0..<shared.count {
                var missing: [Change] = []
                for other in 0..<shared.count where other != device {
                    missing += try shared.missing(from: other, to: device)
                }
                for change in missing.shuffled(using: &random) {
                    try shared.libraries[device].store.ingest(trusting: [change])
                    guard
                        try await Self.expectCurrentVersionBeforeRefreshing(
                            shared.documents[device], context: "\(history), device \(device) received \(change.id)")
                    else { return }
                    try await shared.documents[device].refresh()
                }
                #expect(try shared.libraries[device].store.pendingChanges(of: shared.id).isEmpty, "\(history)")
                // A device that lacked nothing has not looked at what it received during the history yet.
                try await shared.documents[device].refresh()
                let shown = try await shared.snapshot(device)
                #expect(shown == snapshot, "\(history): device \(device) shows \(shown), a fresh receiver \(snapshot)")
            }
            #expect(snapshot.inConflict == (expected.count > 1), "\(history): \(snapshot)")
            #expect(snapshot.unresolved == Array(snapshot.versions.dropFirst()), "\(history): \(snapshot)")

            // One device, or two at once, settles by latest-wins; once exchanged, all show the same and no conflict.
            let versions = try await shared.documents[0].versions()
            let latest = versions.max {
                ($0.modificationDate, $0.head.lamport, $0.head.id.device) < (
                    $1.modificationDate, $1.head.lamport, $1.head.id.device
                )
            }!
            let resolvers = Array((0..<shared.count).shuffled(using: &random).prefix(random.int(in: 1...2)))
            for device in resolvers { try await shared.documents[device].resolve(.latest) }
            try await shared.syncAll()
            for device in 0..<shared.count {
                let shown = try await shared.snapshot(device)
                #expect(
                    shown.versions.count == 1 && !shown.inConflict && shown.unresolved.isEmpty,
                    "\(history), resolved on \(resolvers): device \(device) shows \(shown)")
                #expect(
                    shown.modelText == latest.contents.text,
                    "\(history), resolved on \(resolvers): device \(device) shows \(shown), the latest version was \(latest)"
                )
            }
        }
    }

    /// A history of `edits` edits spread over the devices (each edits at least once), with partial sends and
    /// refreshes between them, so that some edits are made on others' work and some apart.
    static func smallHistory(devices: Int, edits: Int, using random: inout SplitMix64) -> [HistoryStep] {
        var editors = Array(0..<devices).shuffled(using: &random)
        while editors.count < edits {
            editors.insert(random.int(in: 0...(devices - 1)), at: random.int(in: 0...editors.count))
        }
        var counts = Array(repeating: 0, count: devices)
        var steps: [HistoryStep] = []
        for device in editors {
            if random.int(in: 0...2) == 0 {
                let from = (device + random.int(in: 1...(devices - 1))) % devices
                steps.append(.send(from: from, to: device, pick: random.next()))
                if Bool.random(using: &random) { steps.append(.refresh(device: device)) }
            }
            counts[device] += 1
            let text = HistoryStep.token(device: device, edit: counts[device])
            let edit: TextEdit = Bool.random(using: &random) ? .insert(position: random.next(), text) : .append(text)
            steps.append(.edit(device: device, edit, after: Int64(random.int(in: 1...30)) * 1_000))
        }
        return steps
    }

    /// What a fresh receiver shows once it got `order`, one change per ingest, refreshing its open document after
    /// each, and, when `closely`, what a document opened only at the end shows; when `closely`, the current version
    /// is also checked after each ingest, before the refresh (`nil` when that failed).
    static func receive(
        _ shared: SharedText, from template: LibraryFixture, in order: [Change], checkingInvariants: Bool,
        closely: Bool,
        context: String
    ) async throws -> (incremental: VersionSnapshot, cold: VersionSnapshot?)? {
        let (fixture, library) = try SharedText.receiver(from: template)
        defer { withExtendedLifetime(fixture) {} }
        let document = try await library.open(shared.id, as: TextDocument.self)
        for change in order {
            try library.store.ingest(trusting: [change])
            if closely,
                try await !expectCurrentVersionBeforeRefreshing(document, context: "\(context), \(change.id) received")
            {
                return nil
            }
            try await document.refresh()
        }
        #expect(try library.store.pendingChanges(of: shared.id).isEmpty, "\(context): changes still wait")
        if checkingInvariants { try library.store.checkInvariants() }
        let incremental = try await VersionSnapshot(document)
        let cold = closely ? try await VersionSnapshot(library.open(shared.id, as: TextDocument.self)) : nil
        return (incremental, cold)
    }

    /// Before a refresh, the current version is the one the document shows while that is still a head, and once
    /// others' changes made on it arrived, the one every device shows (the winning head's), which is what
    /// ``Document/removeOtherVersions()`` keeps.
    @discardableResult
    static func expectCurrentVersionBeforeRefreshing(_ document: Document<TextDocument>, context: String) async throws
        -> Bool
    {
        let heads = try document.library.store.heads(of: document.id)
        let shown = await document.currentHead
        let expected = heads.contains { $0.hash == shown.hash } ? shown : heads.max { HistoryOracle.precedes($0, $1) }!
        let current = try await document.currentVersion()
        let right = current.heads.contains(expected.hash)
        #expect(
            right,
            "\(context): the current version is \(current), expected the one with \(expected.id) (the document shows \(shown.id), heads \(heads.map(\.id)))"
        )
        return right
    }

    // MARK: Detection against an oracle

    /// "An oracle test compares detection with happens-before computed from the full DAG: 0 missed conflicts."
    ///
    /// Random histories over 2 to 4 devices (edits, partial sends, refreshes, resolutions); after every refresh,
    /// and on every device once everything is exchanged, the versions shown must be exactly the heads found from
    /// the parent links, grouped by the text the oracle replays.
    @Test func detectionAgreesWithHappensBeforeOverTheWholeHistory() async throws {
        let seed = TestSeed.make("detectionAgreesWithHappensBeforeOverTheWholeHistory")
        var random = SplitMix64(seed: seed)
        var tally = DetectionTally()
        for trial in 0..<20 {
            let devices = random.int(in: 2...4)
            let steps = HistoryStep.randomHistory(
                devices: devices, count: random.int(in: 8...24), resolutions: true, using: &random)
            let context = "seed \(seed), history \(trial) on \(devices) devices \(steps)"
            let shared = try await SharedText.make(devices: devices)
            for (index, step) in steps.enumerated() {
                try await shared.apply(step)
                switch step {
                case .refresh(let device), .resolve(let device, _):
                    try await Self.compare(
                        shared, device: device, with: &tally, context: "\(context), after step \(index)")
                case .send(_, let device, _):
                    // Not refreshed: the versions are still those of its log, the current one what it shows, or the
                    // winner once others' changes made on that arrived.
                    try await Self.compare(
                        shared, device: device, with: &tally, refreshed: false,
                        context: "\(context), after step \(index)")
                case .edit:
                    break
                }
            }
            for device in 0..<devices {
                try await shared.documents[device].refresh()
                try await Self.compare(shared, device: device, with: &tally, context: "\(context), at the end")
            }
            try await shared.syncAll()
            for device in 0..<devices {
                try await Self.compare(
                    shared, device: device, with: &tally, vectors: device == 0, context: "\(context), exchanged")
            }
        }
        print(
            "detection: \(tally.checks) checks, \(tally.conflicts) in conflict (\(tally.superseded) not refreshed, what they showed superseded; \(tally.equalHeads) with heads of equal state), \(tally.missed) missed, \(tally.spurious) spurious"
        )
        #expect(
            tally.missed == 0,
            "seed \(seed): \(tally.missed) missed versions; first disagreement: \(tally.disagreements.first ?? "none")")
        #expect(
            tally.spurious == 0,
            "seed \(seed): \(tally.spurious) spurious versions; first disagreement: \(tally.disagreements.first ?? "none")"
        )
        #expect(
            tally.disagreements.isEmpty,
            "seed \(seed): \(tally.disagreements.count) disagreements; first: \(tally.disagreements.first ?? "")")
        #expect(tally.conflicts > 0, "seed \(seed): no history made a conflict to detect")
    }

    /// What the oracle comparisons found.
    struct DetectionTally {
        var checks = 0
        /// Checks where the oracle expected competing versions.
        var conflicts = 0
        /// Checks where several heads had one state (one version).
        var equalHeads = 0
        /// Checks of a document not refreshed since others' changes made on what it shows arrived, in conflict.
        var superseded = 0
        /// Versions the oracle expected that the document did not show.
        var missed = 0
        /// Versions the document showed that the oracle did not expect.
        var spurious = 0
        var disagreements: [String] = []
    }

    /// Compares what device `device`'s document shows with the oracle run over its log; when `refreshed`, also its
    /// model and state.
    static func compare(
        _ shared: SharedText, device: Int, with tally: inout DetectionTally, refreshed: Bool = true,
        vectors: Bool = false,
        context: String
    ) async throws {
        let document = shared.documents[device]
        let oracle = HistoryOracle(try shared.log(device))
        let expected = oracle.versions(showing: await document.currentHead.hash)
        let shown = try await document.versions()
        tally.checks += 1
        if expected.count > 1 { tally.conflicts += 1 }
        if expected.contains(where: { $0.heads.count > 1 }) { tally.equalHeads += 1 }
        let expectedIDs = Set(expected.map(\.id))
        let shownIDs = Set(shown.map(\.id))
        tally.missed += expectedIDs.subtracting(shownIDs).count
        tally.spurious += shownIDs.subtracting(expectedIDs).count

        var problems = oracle.problems
        let heads = try shared.libraries[device].store.heads(of: shared.id).map(\.hash)
        if Set(heads) != Set(oracle.heads.map(\.hash)) {
            problems.append(
                "the store's heads \(heads.map(\.shortHex)), by parent links \(oracle.heads.map(\.hash.shortHex))")
        }
        let describe = { (versions: [(ChangeHash, [ChangeHash], String)]) in
            versions.map { "\($0.0.shortHex) \($0.1.map(\.shortHex)) \($0.2.debugDescription)" }.joined(separator: ", ")
        }
        let shownList = shown.map { ($0.id, $0.heads, $0.contents.text) }
        let expectedList = expected.map { ($0.id, $0.heads, $0.text) }
        if shownList.map(\.0) != expectedList.map(\.0) || shownList.map(\.1) != expectedList.map(\.1)
            || shownList.map(\.2) != expectedList.map(\.2)
        {
            problems.append("shows [\(describe(shownList))], expected [\(describe(expectedList))]")
        }
        let current = try await document.currentVersion()
        if current.id != expected.first?.id || !current.isCurrent || current.isConflict {
            problems.append(
                "the current version is \(current), expected \(expected.first.map { $0.id.shortHex } ?? "none")")
        }
        if !refreshed {
            let shownHead = await document.currentHead.hash
            if expected.count > 1, !oracle.heads.contains(where: { $0.hash == shownHead }) { tally.superseded += 1 }
            if !problems.isEmpty {
                tally.disagreements.append(
                    "\(context), device \(device) (not refreshed): \(problems.joined(separator: "; "))")
            }
            return
        }
        if await document.currentHead.hash != oracle.heads.last?.hash {
            problems.append(
                "shows \(await document.currentHead.id), the winning head is \(oracle.heads.last.map { "\($0.id)" } ?? "none")"
            )
        }
        let inConflict = await document.state.contains(.inConflict)
        if inConflict != (expected.count > 1) {
            problems.append(
                inConflict ? "in conflict with one version" : "not in conflict with \(expected.count) versions")
        }
        let model = await document.model.text
        if model != expected.first?.text {
            problems.append(
                "the model shows \(model.debugDescription), the current version is \((expected.first?.text ?? "").debugDescription)"
            )
        }
        if vectors { problems += oracle.vectorDisagreements() }
        if !problems.isEmpty {
            tally.disagreements.append("\(context), device \(device): \(problems.joined(separator: "; "))")
        }
    }

    // MARK: Two busy writers

    /// "Two writers each make 100 interleaved offline writes, then sync: at most 2 open versions (no sibling
    /// explosion)."
    @Test func twoWritersMakingAHundredOfflineWritesEachEndWithAtMostTwoVersions() async throws {
        let seed = TestSeed.make("twoWritersMakingAHundredOfflineWritesEachEndWithAtMostTwoVersions")
        var random = SplitMix64(seed: seed)
        let shared = try await SharedText.make(devices: 2)
        var made = [0, 0]
        var syncs = 0
        while made != [100, 100] {
            let device = made[0] == 100 ? 1 : made[1] == 100 ? 0 : random.int(in: 0...1)
            made[device] += 1
            let text = HistoryStep.token(device: device, edit: made[device])
            let edit: TextEdit = random.int(in: 0...3) == 0 ? .insert(position: random.next(), text) : .append(text)
            try await shared.apply(.edit(device: device, edit, after: Int64(random.int(in: 0...5)) * 1_000))
            guard random.int(in: 0...11) == 0 else { continue }
            // A partial sync: one way or both, about half of what is missing each way, then a refresh or not.
            syncs += 1
            for (from, to) in [(0, 1), (1, 0)] where Bool.random(using: &random) {
                try await shared.apply(.send(from: from, to: to, pick: random.next() | 1))
                if Bool.random(using: &random) { try await shared.apply(.refresh(device: to)) }
            }
            for device in 0..<2 {
                let heads = try shared.libraries[device].store.heads(of: shared.id).count
                let versions = try await shared.documents[device].versions().count
                #expect(
                    heads <= 2 && versions <= 2,
                    "seed \(seed), after \(made) writes: device \(device) has \(heads) heads and \(versions) versions")
            }
        }
        try await shared.syncAll()
        let first = try await shared.snapshot(0)
        let second = try await shared.snapshot(1)
        #expect(first.versions.count <= 2, "seed \(seed), \(syncs) partial syncs: \(first)")
        #expect(first == second, "seed \(seed), \(syncs) partial syncs: device 0 shows \(first), device 1 \(second)")
        var tally = DetectionTally()
        for device in 0..<2 {
            try await Self.compare(
                shared, device: device, with: &tally, vectors: device == 0, context: "seed \(seed), exchanged")
        }
        #expect(tally.disagreements.isEmpty, "\(tally.disagreements)")
        let log = try shared.log(0)
        let byHash = Dictionary(uniqueKeysWithValues: log.map { ($0.hash, $0) })
        let edits = log.filter { if case .edit = $0.kind { true } else { false } }
        #expect(edits.count == 200, "seed \(seed): every write is its own change")
        // Besides them, only the resolutions a writer recorded when it edited the version shown over its own.
        for change in log where !edits.contains(change) && !shared.base.contains(change) {
            let implicit =
                if case .resolution(let resolution) = change.kind, resolution.strategy == .userChoice,
                    resolution.discarded.count == 1, byHash[resolution.discarded[0]]?.id.device == change.id.device
                { true } else { false }
            #expect(
                implicit, "seed \(seed): \(change.id) is neither a write nor a writer's implicit choice: \(change.kind)"
            )
        }

        try await shared.documents[1].resolve(.latest)
        try await shared.syncAll()
        let settled = [try await shared.snapshot(0), try await shared.snapshot(1)]
        #expect(
            settled[0] == settled[1] && settled[0].versions.count == 1 && !settled[0].inConflict,
            "seed \(seed): \(settled)")
    }

    // MARK: Skewed clocks

    /// "A skewed wall clock changes only latest-wins outcomes, never causality."
    ///
    /// The same random histories run with every clock right and with some clocks 90 s behind or an hour ahead:
    /// every change has the same identity, parents, vector and lamport timestamp (only wall times, and so hashes,
    /// differ), every device the same heads, versions and texts; choosing a version by identity settles the same
    /// way; only latest-wins may pick another version.
    @Test func aSkewedClockChangesOnlyLatestWinsOutcomes() async throws {
        let seed = TestSeed.make("aSkewedClockChangesOnlyLatestWinsOutcomes")
        var random = SplitMix64(seed: seed)
        let skews: [[Int64]] = [[0, -90_000, 0], [0, 0, 3_600_000], [3_600_000, -90_000, 0]]
        var latestDiffered = 0
        for trial in 0..<3 {
            let steps = HistoryStep.randomHistory(devices: 3, count: 24, resolutions: true, using: &random)
            let context = "seed \(seed), history \(trial) \(steps)"
            let right = try await Self.run(steps, devices: 3, skews: [], context: context)
            for skew in skews {
                let skewed = try await Self.run(steps, devices: 3, skews: skew, context: context)
                Self.expectSameCausality(skewed, right, "\(context), clocks moved by \(skew) ms")
                if skewed.latest != right.latest { latestDiffered += 1 }
            }
        }
        print("skew: latest-wins picked another version in \(latestDiffered) of \(3 * skews.count) skewed runs")

        // Made so that it must: the Mac edits ten seconds after the iPad, by a clock 90 s behind.
        let steps: [HistoryStep] = [
            .edit(device: 0, .append("from the iPad\n"), after: 1_000),
            .edit(device: 1, .append("from the Mac\n"), after: 11_000),
        ]
        let right = try await Self.run(steps, devices: 2, skews: [], context: "the Mac's clock right")
        let skewed = try await Self.run(steps, devices: 2, skews: [0, -90_000], context: "the Mac 90 s behind")
        Self.expectSameCausality(skewed, right, "the Mac 90 s behind")
        #expect(
            right.latest?.text == "base\nfrom the Mac\n",
            "the Mac's edit is the latest: \(String(describing: right.latest))")
        #expect(
            skewed.latest?.text == "base\nfrom the iPad\n",
            "by the Mac's clock, the iPad's edit is the latest: \(String(describing: skewed.latest))")
    }

    /// What a run of a history shows: its causal structure, with changes named by identity, not by hash (hashes
    /// cover wall times), and how two resolutions came out.
    struct CausalOutcome: Equatable {
        /// Per device, before and after exchanging everything: each change's identity, lamport, parents and vector,
        /// then the heads, the versions (heads and text), the unresolved ones and what the document shows.
        var structure: [[String]]
        /// What keeping the last version by identity gave: the kept version and the text.
        var chosen: Resolved?
        /// What latest-wins gave.
        var latest: Resolved?

        struct Resolved: Equatable {
            var version: ChangeID
            var text: String
        }
    }

    static func run(_ steps: [HistoryStep], devices: Int, skews: [Int64], context: String) async throws -> CausalOutcome
    {
        let shared = try await SharedText.make(devices: devices, skews: skews)
        for step in steps { try await shared.apply(step) }
        try await shared.refreshAll()
        var outcome = CausalOutcome(structure: [])
        for device in 0..<devices { outcome.structure.append(try await structure(of: shared, device: device)) }
        try await shared.syncAll()
        for device in 0..<devices { outcome.structure.append(try await structure(of: shared, device: device)) }
        // Two devices settle the same versions at once: one keeps the last by causal order, one the latest.
        let versions = try await shared.documents[0].versions()
        guard versions.count > 1 else { return outcome }
        let ids = try identities(in: shared)
        let last = versions.last!
        let keeping = shared.documents[devices - 1]
        try await keeping.replace(with: try #require(try await keeping.versions().first { $0.id == last.id }))
        outcome.chosen = .init(version: last.head.id, text: await keeping.model.text)
        try await shared.documents[0].resolve(.latest)
        let head = try #require(try shared.libraries[0].store.heads(of: shared.id).first)
        guard case .resolution(let resolution) = head.kind, let kept = resolution.chosen.first, let id = ids[kept]
        else {
            Issue.record("\(context), clocks moved by \(skews) ms: latest-wins recorded no resolution: \(head)")
            return outcome
        }
        outcome.latest = .init(version: id, text: await shared.documents[0].model.text)
        return outcome
    }

    static func identities(in shared: SharedText) throws -> [ChangeHash: ChangeID] {
        Dictionary(uniqueKeysWithValues: try shared.allChanges().map { ($0.hash, $0.id) })
    }

    /// Device `device`'s history and versions, with changes named by identity.
    static func structure(of shared: SharedText, device: Int) async throws -> [String] {
        let ids = try identities(in: shared)
        let name = { (hashes: [ChangeHash]) in
            hashes.map { ids[$0]?.description ?? "?\($0.shortHex)" }.sorted().joined(separator: " ")
        }
        var lines = try shared.log(device).sorted { $0.id < $1.id }.map { change in
            "\(change.id) lamport \(change.lamport) parents [\(name(change.parents))] vector \(change.vector) \(summary(of: change.kind, naming: name))"
        }
        lines.append("heads [\(name(try shared.libraries[device].store.heads(of: shared.id).map(\.hash)))]")
        let document = shared.documents[device]
        for version in try await document.versions() {
            lines.append(
                "version \(name([version.id])) of [\(name(version.heads))] \(version.contents.text.debugDescription)\(version.isCurrent ? " current" : "")"
            )
        }
        lines.append("unresolved [\(name(try await document.unresolvedConflictVersions().map(\.id)))]")
        lines.append(
            "shows \(await document.model.text.debugDescription)\(await document.state.contains(.inConflict) ? " in conflict" : "")"
        )
        return lines
    }

    static func summary(of kind: ChangeKind, naming name: ([ChangeHash]) -> String) -> String {
        switch kind {
        case .edit(let edit):
            let operations =
                (try? TextDocument.Operation.decodeGroup(edit.operations))?.map(\.description) ?? ["undecodable"]
            return "edit \(operations.joined(separator: ", "))"
        case .resolution(let resolution):
            return
                "resolution \(resolution.strategy) chosen [\(name(resolution.chosen))] discarded [\(name(resolution.discarded))]"
        case .baseline:
            return "baseline"
        case .lifecycle(let event):
            return "\(event)"
        }
    }

    static func expectSameCausality(_ skewed: CausalOutcome, _ right: CausalOutcome, _ context: String) {
        for (device, (lines, expected)) in zip(skewed.structure, right.structure).enumerated() where lines != expected {
            let first = zip(lines, expected).first { $0 != $1 }
            Issue.record(
                "\(context): snapshot \(device) differs; first \(first.map { "\($0.0) instead of \($0.1)" } ?? "\(lines.count) lines instead of \(expected.count)")"
            )
            return
        }
        #expect(skewed.structure.count == right.structure.count, "\(context)")
        #expect(
            skewed.chosen == right.chosen,
            "\(context): keeping a version by identity gave \(String(describing: skewed.chosen)), with every clock right \(String(describing: right.chosen))"
        )
    }

    // MARK: The device whose version lost goes on editing

    /// When the device whose version lost goes on editing the current one, its state says at once what its versions
    /// say; and nothing is lost without a record: its own competing version must stay a version, or a resolution
    /// must record it as discarded (its edit is its implicit choice of the version it edits).
    @Test func editingTheCurrentVersionKeepsOrRecordsTheEditorsCompetingVersion() async throws {
        let shared = try await SharedText.make(devices: 2)
        try await shared.apply(.edit(device: 0, .append("from the iPad\n"), after: 1_000))
        try await shared.apply(.edit(device: 1, .append("from the Mac\n"), after: 1_000))
        try await shared.syncAll()
        let winner = try await shared.documents[0].currentVersion().head.id.device
        let loser = winner == shared.fixtures[0].device.id ? 1 : 0
        let competing = try #require(try await shared.documents[loser].unresolvedConflictVersions().first)
        #expect(competing.head.id.device == shared.fixtures[loser].device.id)
        let shown = await shared.documents[loser].model.text

        try await shared.apply(.edit(device: loser, .append("more\n"), after: 1_000))
        // Whatever became of it, the editor's state says what its versions say, without waiting for a refresh.
        let inConflict = await shared.documents[loser].state.contains(.inConflict)
        let count = try await shared.documents[loser].versions().count
        #expect(inConflict == (count > 1), "in conflict: \(inConflict), with \(count) versions")
        try await shared.syncAll()
        let versions = try await shared.documents[0].versions()
        let kept = versions.contains { $0.contents.text == competing.contents.text }
        let recorded = try await shared.documents[0].lossLedger().contains { record in
            record.discarded.contains { $0.head.hash == competing.id }
        }
        #expect(
            kept || recorded,
            "\(competing.contents.text.debugDescription) vanished: versions \(versions.map(\.contents.text))")
        // Every device agrees, and shows the version the editor edited, with its edit.
        for device in 0..<shared.count {
            let snapshot = try await shared.snapshot(device)
            #expect(snapshot == (try await shared.snapshot(0)), "device \(device) shows \(snapshot)")
            #expect(snapshot.modelText == shown + "more\n", "device \(device) shows \(snapshot)")
        }
    }
}
