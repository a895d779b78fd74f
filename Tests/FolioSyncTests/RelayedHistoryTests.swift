import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// A long history that reached a relay (a server) in runs reaches a device that reads only format 2 through that
/// relay, one message at a time: each message's changes must be vouched for within the store's bound on changes that
/// wait for a head (`StoreLimits.unvouchedChangesPerDocument`), so the runs must have brought the relay heads close
/// enough together.
@Suite(.workPool) struct RelayedHistoryTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Runs an exchange over a first-in first-out pipe, handing each side one message at a time; fails past
    /// `stepLimit` steps.
    private func exchange(
        _ initiator: ChangeLogStore, initiatorFormats: SyncDriver.Formats, _ responder: ChangeLogStore,
        responderFormats: SyncDriver.Formats, stepLimit: Int = 3_000, afterEachMessage: () throws -> Void = {}
    ) throws -> (initiator: SyncReport, responder: SyncReport) {
        var first = try SyncDriver(store: initiator, role: .initiator, id: 11, formats: initiatorFormats)
        var second = try SyncDriver(store: responder, role: .responder, id: 22, formats: responderFormats)
        var queue: [(toResponder: Bool, bytes: [UInt8])] = try first.start().map { (true, $0) }
        var steps = 0
        while !first.isFinished {
            steps += 1
            guard steps < stepLimit else { break }
            guard !queue.isEmpty else {
                queue += try first.tick().map { (true, $0) }
                queue += try second.tick().map { (false, $0) }
                continue
            }
            let next = queue.removeFirst()
            if next.toResponder {
                queue += try second.receive(batch: [next.bytes]).map { (false, $0) }
            } else {
                queue += try first.receive(batch: [next.bytes]).map { (true, $0) }
            }
            try afterEachMessage()
        }
        return (first.report, second.report)
    }

    @Test func aLongHistoryUploadedInRunsReachesAFormat2Device() throws {
        let clock = ManualClock(start: Fixtures.start)
        let writers = try ["Ana", "Ben"].map {
            try ChangeLogStore(at: directory.file("\($0).sqlite"), device: Device.named($0), clock: clock)
        }
        // Two devices each write 5,000 changes, syncing now and then: concurrent branches and merges, 10,000 changes
        // in all, well past the 4,096 that may wait unvouched.
        for round in 0..<10 {
            for writer in writers {
                try writer.append(
                    (0..<500).map { Fixtures.edit("\(writer.localDevice.name) \(round).\($0)") }, to: Fixtures.document)
            }
            if round % 3 == 2 {
                _ = try exchange(writers[0], initiatorFormats: .plain, writers[1], responderFormats: .plain)
            }
        }
        _ = try exchange(writers[0], initiatorFormats: .plain, writers[1], responderFormats: .plain)
        #expect(try writers[0].heads(of: Fixtures.document) == (try writers[1].heads(of: Fixtures.document)))

        // Ana uploads everything to the relay in runs.
        let relay = try ChangeLogStore(at: directory.file("relay.sqlite"), device: Device.named("Relay"), clock: clock)
        let upload = try exchange(writers[0], initiatorFormats: .runs, relay, responderFormats: .runs)
        #expect(upload.initiator.isComplete)
        #expect(try relay.changeCount() == 10_000)

        // A device that reads only format 2 catches up from the relay.
        let newcomer = try ChangeLogStore(
            at: directory.file("newcomer.sqlite"), device: Device.named("Newcomer"), clock: clock, access: .exclusive)
        let catchUp = try exchange(newcomer, initiatorFormats: .plain, relay, responderFormats: .plain)
        #expect(catchUp.initiator.isComplete, "\(catchUp.initiator)")
        #expect(try newcomer.changeCount() == 10_000)
        #expect(try newcomer.pendingChanges(of: Fixtures.document).isEmpty)
        #expect(catchUp.initiator.duplicates == 0, "no change had to be sent twice")
        #expect(try newcomer.heads(of: Fixtures.document) == (try relay.heads(of: Fixtures.document)))
    }

    /// Two writers and a relay: each writer takes what the relay has, types, and sends what it typed with its own
    /// signed head, as a live sync does, so that either writer's changes nearly always build on the other's latest.
    struct Typists {
        let writers: [ChangeLogStore]
        let relay: ChangeLogStore
        let document = Fixtures.document

        init(in directory: TemporaryDirectory, clock: ManualClock, names: [String] = ["Ana", "Ben"]) throws {
            writers = try names.map {
                try ChangeLogStore(at: directory.file("\($0).sqlite"), device: Device.named($0), clock: clock)
            }
            relay = try ChangeLogStore(
                at: directory.file("relay.sqlite"), device: Device.named("Relay"), clock: clock)
        }

        /// Gives `to` what `from` has of the document and `to` lacks, with the heads `from` passes on.
        func send(from: ChangeLogStore, to: ChangeLogStore) throws {
            let since = try to.vector(of: document)
            let changes = try from.changes(of: document, since: since)
            guard !changes.isEmpty else { return }
            let result = try to.ingest(changes, heads: try from.signedHeads(of: document, since: since))
            try #require(result.turnedAway.isEmpty && (try to.pendingChanges(of: document)).isEmpty)
        }

        /// Each round, Ana types `paces[0]` changes, then Ben `paces[1]`. Paces that differ put the heads of one
        /// writer's spans between those of the other's.
        func type(rounds: Range<Int>, paces: [Int]) throws {
            try type(rounds: rounds) { _, index in paces[index] }
        }

        /// Each round, each writer in turn types `pace(round, writer's index)` changes (none: it does not sync).
        func type(rounds: Range<Int>, pace: (Int, Int) -> Int) throws {
            for round in rounds {
                for (index, writer) in writers.enumerated() {
                    let count = pace(round, index)
                    guard count > 0 else { continue }
                    try send(from: relay, to: writer)
                    try writer.append(
                        (0..<count).map { Fixtures.edit("\(writer.localDevice.name) \(round).\($0)") }, to: document)
                    try send(from: writer, to: relay)
                }
            }
        }
    }

    /// Catches `newcomer` up from `relay` in `formats`: the report, and the most changes that waited at once.
    private func catchUp(
        _ newcomer: ChangeLogStore, from relay: ChangeLogStore, formats: SyncDriver.Formats
    ) throws -> (report: SyncReport, mostWaiting: Int) {
        var mostWaiting = 0
        let catchUp = try exchange(newcomer, initiatorFormats: formats, relay, responderFormats: formats) {
            mostWaiting = max(mostWaiting, try newcomer.pendingChanges(of: Fixtures.document).count)
        }
        #expect(catchUp.initiator.isComplete, "\(catchUp.initiator)")
        #expect(try newcomer.changeCount() == (try relay.changeCount()))
        #expect(try newcomer.heads(of: Fixtures.document) == (try relay.heads(of: Fixtures.document)))
        #expect(try newcomer.pendingChanges(of: Fixtures.document).isEmpty)
        #expect(catchUp.initiator.duplicates == 0, "no change had to be sent twice")
        return (catchUp.initiator, mostWaiting)
    }

    /// A device that joins later catches up from the relay part by part: each part carries heads that vouch for
    /// one another (a head of one device never needs a change of the other beyond that device's head in the part),
    /// so what waits for a head stays within about a part instead of piling up until the last part brings the
    /// devices' last changes.
    @Test(arguments: [SyncDriver.Formats.runs, .plain])
    func aHistoryTypedTogetherCatchesUpPartByPart(formats: SyncDriver.Formats) throws {
        let clock = ManualClock(start: Fixtures.start)
        let typists = try Typists(in: directory, clock: clock)
        try typists.type(rounds: 0..<600, paces: [2, 5])
        let total = try typists.relay.changeCount()
        #expect(total == 4_200)

        let newcomer = try ChangeLogStore(
            at: directory.file("newcomer.sqlite"), device: Device.named("Newcomer"), clock: clock, access: .exclusive)
        let (_, mostWaiting) = try catchUp(newcomer, from: typists.relay, formats: formats)
        // What waits is the end of one part, after the last set of heads in it that vouch for one another (2,311
        // changes waited at once when each part's latest heads were sent instead).
        #expect(mostWaiting <= 1_024, "at most \(mostWaiting) of \(total) changes waited at once")
    }

    /// A writer stops while the other types on; a device that caught up part of the way catches up again from
    /// there (its parts no longer fall on the spans of the relay's heads). The last changes of the writer who
    /// stopped come in a part whose heads of the other writer cannot vouch for them yet: they still carry a head
    /// of their own, which a later part's heads let in.
    @Test(arguments: [SyncDriver.Formats.runs, .plain])
    func aWriterWhoStopsHasItsLastChangesTakenIn(formats: SyncDriver.Formats) throws {
        let clock = ManualClock(start: Fixtures.start)
        let typists = try Typists(in: directory, clock: clock)
        let newcomer = try ChangeLogStore(
            at: directory.file("newcomer.sqlite"), device: Device.named("Newcomer"), clock: clock, access: .exclusive)
        try typists.type(rounds: 0..<151, paces: [2, 5])
        _ = try catchUp(newcomer, from: typists.relay, formats: formats)
        // Ana's last change is the 3,082nd, made on Ben's 3,080th; the second catch-up starts after the 1,057th,
        // so its parts end at the 2,081st and 3,105th (both formats). The relay keeps Ben's heads at the 3,066th
        // (the latest of his below 3,072, the end of a span) and at his last of the next span, beyond the part:
        // none in the part reaches the change Ana's last one was made on.
        try typists.type(rounds: 151..<441, paces: [2, 5])
        try typists.type(rounds: 441..<600, paces: [0, 5])
        let total = try typists.relay.changeCount()
        #expect(total == 3_882)
        let (_, mostWaiting) = try catchUp(newcomer, from: typists.relay, formats: formats)
        // The part with Ana's last change waits whole (her head there waits for Ben's next one, and Ben's heads
        // there may not need her changes held with it), until the next part lets it in.
        #expect(mostWaiting <= 2_048, "at most \(mostWaiting) of \(total) changes waited at once")
    }

    /// Three writers type at random paces, now and then pausing; a device catches up part of the way at a random
    /// round, then to the end: every change comes in, none twice, nothing left waiting.
    @Test(arguments: [1_729, 65_537, 3_141_592])
    func threeWritersAtRandomPacesCatchUp(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        let clock = ManualClock(start: Fixtures.start)
        let typists = try Typists(in: directory, clock: clock, names: ["Ana", "Ben", "Cy"])
        let paces = (0..<3).map { _ in Int.random(in: 1...6, using: &generator) }
        let pauses = (0..<3).map { _ in Int.random(in: 0...3, using: &generator) }
        var random: [[Int]] = []
        for _ in 0..<500 {
            random.append(
                (0..<3).map { writer in
                    Int.random(in: 0...9, using: &generator) < pauses[writer]
                        ? 0 : Int.random(in: 1...paces[writer], using: &generator)
                })
        }
        let midway = Int.random(in: 100..<400, using: &generator)
        let formats: SyncDriver.Formats = seed % 2 == 0 ? .runs : .plain
        print("seed \(seed): paces \(paces), pauses \(pauses), catch-up midway at round \(midway), \(formats)")
        let newcomer = try ChangeLogStore(
            at: directory.file("newcomer.sqlite"), device: Device.named("Newcomer"), clock: clock, access: .exclusive)
        try typists.type(rounds: 0..<midway) { round, writer in random[round][writer] }
        _ = try catchUp(newcomer, from: typists.relay, formats: formats)
        try typists.type(rounds: midway..<500) { round, writer in random[round][writer] }
        let (_, mostWaiting) = try catchUp(newcomer, from: typists.relay, formats: formats)
        #expect(mostWaiting <= 2_048, "seed \(seed): at most \(mostWaiting) changes waited at once")
    }
}
