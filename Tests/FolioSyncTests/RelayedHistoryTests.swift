import FolioCore
import FolioStore
import FolioSync
import FolioTesting
import Foundation
import Testing

/// A long history that reached a relay (a server) in runs reaches a device that reads only format 2 through that
/// relay, one message at a time: each message's changes must be vouched for within the store's bound on changes that
/// wait for a head (`StoreLimits.unvouchedChangesPerDocument`), so the runs must have brought the relay heads close
/// enough together.
@Suite struct RelayedHistoryTests {
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

    /// Two devices type together through a relay, each sending a few changes at a time with its own signed head, as
    /// a live sync does, so that either device's changes nearly always build on the other's latest. A device that
    /// joins later catches up from the relay part by part: each part carries heads that vouch for one another (a
    /// head of one device never needs a change of the other beyond that device's head in the part), so what waits
    /// for a head stays within about a part instead of piling up until the last part brings the devices' last
    /// changes.
    @Test(arguments: [SyncDriver.Formats.runs, .plain])
    func aHistoryTypedTogetherCatchesUpPartByPart(formats: SyncDriver.Formats) throws {
        let clock = ManualClock(start: Fixtures.start)
        let writers = try ["Ana", "Ben"].map {
            try ChangeLogStore(at: directory.file("\($0).sqlite"), device: Device.named($0), clock: clock)
        }
        let relay = try ChangeLogStore(at: directory.file("relay.sqlite"), device: Device.named("Relay"), clock: clock)
        let document = Fixtures.document
        /// Gives `to` what `from` has of the document and `to` lacks, with the heads `from` passes on.
        func send(from: ChangeLogStore, to: ChangeLogStore) throws {
            let since = try to.vector(of: document)
            let changes = try from.changes(of: document, since: since)
            guard !changes.isEmpty else { return }
            let result = try to.ingest(changes, heads: try from.signedHeads(of: document, since: since))
            try #require(result.turnedAway.isEmpty && (try to.pendingChanges(of: document)).isEmpty)
        }
        // They type at different paces, so that the heads of one device's spans of sequence numbers fall between
        // those of the other's.
        for round in 0..<600 {
            for (writer, count) in zip(writers, [2, 5]) {
                try send(from: relay, to: writer)
                try writer.append(
                    (0..<count).map { Fixtures.edit("\(writer.localDevice.name) \(round).\($0)") }, to: document)
                try send(from: writer, to: relay)
            }
        }
        let total = try relay.changeCount()
        #expect(total == 4_200)

        let newcomer = try ChangeLogStore(
            at: directory.file("newcomer.sqlite"), device: Device.named("Newcomer"), clock: clock, access: .exclusive)
        var mostWaiting = 0
        let catchUp = try exchange(newcomer, initiatorFormats: formats, relay, responderFormats: formats) {
            mostWaiting = max(mostWaiting, try newcomer.pendingChanges(of: document).count)
        }
        #expect(catchUp.initiator.isComplete, "\(catchUp.initiator)")
        #expect(try newcomer.changeCount() == total)
        #expect(try newcomer.heads(of: document) == (try relay.heads(of: document)))
        #expect(catchUp.initiator.duplicates == 0, "no change had to be sent twice")
        // What waits is the end of one part, after the last set of heads in it that vouch for one another (2,311
        // changes waited at once when each part's latest heads were sent instead).
        #expect(mostWaiting <= 1_024, "at most \(mostWaiting) of \(total) changes waited at once")
    }
}
