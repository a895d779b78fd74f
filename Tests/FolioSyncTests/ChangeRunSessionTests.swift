import FolioCore
import FolioStore
import FolioSync
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Message format 3 between two drivers: replies carry changes as runs, and an exchange in runs ends with both stores
/// holding exactly what the same exchange in format 2 leaves, over random histories of several devices and
/// documents, random message limits and random batching. Each seed of the table is one history; a failure names it.
@Suite(.workPool) struct ChangeRunSessionTests {
    static let seeds: [UInt64] = [1, 2, 3, 7, 38, 101, 2_026, 65_537]
    static let documents = [Fixtures.document, Fixtures.otherDocument, Fixtures.thirdDocument]
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Three devices that edit the documents at random and sync now and then (in format 2), so that their logs hold
    /// concurrent branches, merges by several parents and each other's changes.
    private func histories(_ random: inout SplitMix64, seed: UInt64) throws -> [ChangeLogStore] {
        let devices = ["Ana", "Ben", "Cy"].map { Device.named("\($0) \(seed)") }
        let clock = ManualClock(start: Fixtures.start)
        let stores = try devices.enumerated().map { index, device in
            try ChangeLogStore(
                at: directory.file("\(index).sqlite"), device: device, clock: clock, access: .exclusive)
        }
        for step in 0..<(40 + Int(random.next() % 40)) {
            clock.advance(byMilliseconds: 1_000)
            let store = stores[Int(random.next() % 3)]
            let document = Self.documents[Int(random.next() % UInt64(Self.documents.count))]
            let count = 1 + Int(random.next() % 12)
            try store.append(
                (0..<count).map { Fixtures.edit("\(store.localDevice.name) \(step).\($0)") }, to: document)
            if random.next() % 5 == 0 {
                let pair = (Int(random.next() % 3), Int(random.next() % 3))
                if pair.0 != pair.1 {
                    _ = try exchange(stores[pair.0], stores[pair.1], formats: .plain, random: &random)
                }
            }
        }
        return stores
    }

    /// What one exchange did: both reports.
    struct Outcome {
        var initiator: SyncReport
        var responder: SyncReport
    }

    /// Runs an exchange over a first-in first-out pipe, handing over 1 to 4 consecutive messages to one side at once.
    private func exchange(
        _ initiator: ChangeLogStore, _ responder: ChangeLogStore, formats: SyncDriver.Formats,
        limits: SyncSession.Limits = SyncSession.Limits(), random: inout SplitMix64
    ) throws -> Outcome {
        var first = try SyncDriver(store: initiator, role: .initiator, id: 11, limits: limits, formats: formats)
        var second = try SyncDriver(store: responder, role: .responder, id: 22, limits: limits, formats: formats)
        var queue: [(toResponder: Bool, bytes: [UInt8])] = []
        queue += try first.start().map { (true, $0) }
        var steps = 0
        while !first.isFinished {
            steps += 1
            guard steps < 10_000 else { throw CancellationError() }
            guard let next = queue.first else {
                queue += try first.tick().map { (true, $0) }
                queue += try second.tick().map { (false, $0) }
                continue
            }
            let run = queue.prefix { $0.toResponder == next.toResponder }.count
            let count = min(run, 1 + Int(random.next() % 4))
            let delivered = queue.prefix(count).map(\.bytes)
            queue.removeFirst(count)
            if next.toResponder {
                queue += try second.receive(batch: delivered).map { (false, $0) }
            } else {
                queue += try first.receive(batch: delivered).map { (true, $0) }
            }
        }
        return Outcome(initiator: first.report, responder: second.report)
    }

    @Test(arguments: seeds)
    func anExchangeInRunsLeavesWhatOneInFormat2Leaves(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let stores = try histories(&random, seed: seed)
        let limits = SyncSession.Limits(changesPerMessage: 1 + Int(random.next() % 64))
        let left = try stores[0].copyInMemory(named: "left-\(seed)")
        let right = try stores[1].copyInMemory(named: "right-\(seed)")
        var plainRandom = SplitMix64(seed: seed ^ 0x5EED)
        var runsRandom = SplitMix64(seed: seed ^ 0x5EED)
        let plain = try exchange(left, right, formats: .plain, limits: limits, random: &plainRandom)
        let runs = try exchange(stores[0], stores[1], formats: .runs, limits: limits, random: &runsRandom)

        #expect(
            try Convergence.snapshot(stores[0]) == Convergence.snapshot(left), "seed \(seed): the initiators differ")
        #expect(
            try Convergence.snapshot(stores[1]) == Convergence.snapshot(right), "seed \(seed): the responders differ")
        try Convergence.expectConverged([stores[0], stores[1]])
        #expect(plain.initiator.runsReceived == 0 && plain.responder.runsReceived == 0, "seed \(seed)")
        let missing = runs.initiator.changesReceived + runs.responder.changesReceived
        #expect(missing == plain.initiator.changesReceived + plain.responder.changesReceived, "seed \(seed)")
        if missing > 0 {
            #expect(runs.initiator.runsReceived + runs.responder.runsReceived > 0, "seed \(seed): no run was sent")
        }
        #expect(runs.initiator.messagesRejected == 0 && runs.responder.messagesRejected == 0, "seed \(seed)")
        // The third device catches up on everything in runs, from the first.
        var third = SplitMix64(seed: seed ^ 0x7)
        let catchUp = try exchange(stores[2], stores[0], formats: .runs, random: &third)
        try Convergence.expectConverged([stores[0], stores[2]])
        #expect(catchUp.initiator.messagesRejected == 0, "seed \(seed): \(catchUp.initiator.problems)")
    }

    /// A driver that offers runs writes format 2 until the peer writes format 3, and format 3 from then on; one that
    /// offers nothing never does, and both exchange everything with either.
    @Test func aDriverWritesFormat3OnlyOnceThePeerDoes() throws {
        var random = SplitMix64(seed: 3)
        let stores = try histories(&random, seed: 3)
        var initiator = try SyncDriver(store: stores[0], role: .initiator, id: 1, formats: .runsWhenOffered)
        let hello = try initiator.start()
        #expect(hello.allSatisfy { SyncMessage.format(of: $0) == SyncMessage.formatVersion })
        var plainResponder = try SyncDriver(store: stores[1], role: .responder, id: 2, formats: .plain)
        let plainReply = try plainResponder.receive(batch: hello)
        #expect(plainReply.allSatisfy { SyncMessage.format(of: $0) == SyncMessage.formatVersion })
        _ = try initiator.receive(batch: plainReply)
        #expect(initiator.writtenFormat == SyncMessage.formatVersion)

        var offering = try SyncDriver(store: stores[0], role: .initiator, id: 5, formats: .runsWhenOffered)
        var runsResponder = try SyncDriver(store: stores[1], role: .responder, id: 6, formats: .runs)
        let reply = try runsResponder.receive(batch: try offering.start())
        #expect(reply.allSatisfy { SyncMessage.format(of: $0) == SyncMessage.runFormatVersion })
        _ = try offering.receive(batch: reply)
        #expect(offering.writtenFormat == SyncMessage.runFormatVersion)
        // A peer that writes format 4 is answered in format 4; an older format from it later does not go back.
        let people = SyncMessage.done(from: 9, to: 5).encoded(format: SyncMessage.peopleFormatVersion)
        _ = try offering.receive(people)
        #expect(offering.writtenFormat == SyncMessage.peopleFormatVersion)
        _ = try offering.receive(SyncMessage.done(from: 9, to: 5).encoded(format: SyncMessage.runFormatVersion))
        #expect(offering.writtenFormat == SyncMessage.peopleFormatVersion)
    }

    /// A run handed to a driver that lacks a change it names is ignored as a lost message, and nothing of it is
    /// ingested; the same run is taken once the driver holds that change.
    @Test func aRunNamingAMissingChangeIsIgnoredWhole() throws {
        let sender = try ChangeLogStore(
            at: directory.file("sender.sqlite"), device: .named("Sender"), clock: ManualClock(start: Fixtures.start),
            access: .exclusive)
        let receiver = try ChangeLogStore(
            at: directory.file("receiver.sqlite"), device: .named("Receiver"),
            clock: ManualClock(start: Fixtures.start), access: .exclusive)
        let changes = try sender.append((0..<6).map { Fixtures.edit("line \($0)") }, to: Fixtures.document)
        let byHash = Dictionary(uniqueKeysWithValues: changes.map { ($0.hash, ChangeStamp($0)) })
        let run = try ChangeRunMessage(
            encoding: Array(changes.dropFirst(3)), of: Fixtures.document,
            heads: [sender.signedHead(for: changes[5])!], outside: { byHash[$0] })
        let bytes = SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion)
        var driver = try SyncDriver(store: receiver, role: .responder, id: 9)
        _ = try driver.receive(bytes)
        #expect(driver.report.messagesRejected == 1 && driver.report.runsReceived == 0)
        #expect(try receiver.vector(of: Fixtures.document).isEmpty)
        #expect(try receiver.pendingChanges(of: Fixtures.document).isEmpty)

        _ = try receiver.ingest(
            encoded: changes.prefix(3).map(EncodedChange.init), heads: [sender.signedHead(for: changes[2])!])
        _ = try driver.receive(bytes)
        #expect(driver.report.runsReceived == 1)
        #expect(try receiver.vector(of: Fixtures.document) == changes[5].vector)
    }

    /// A run changed at random (bytes flipped, cut or inserted) is refused whole or decodes to changes the log takes
    /// only under the heads that vouch for them: no forged change enters the log, nothing beyond what the honest run
    /// brings, and the log stays sound. Each seed of the table is a run of one document and its mutations; a failure names it.
    @Test(arguments: seeds)
    func aMutatedRunNeverBringsAForgedChange(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let stores = try histories(&random, seed: seed)
        let source = stores[0]
        guard
            let document = try Self.documents.first(where: { try source.changes(of: $0).count >= 4 })
        else { return }
        let changes = try source.changes(of: document)
        let split = changes.count / 3
        let held = Array(changes.prefix(split))
        let stamps = Dictionary(uniqueKeysWithValues: held.map { ($0.hash, ChangeStamp($0)) })
        let rest = Array(changes.dropFirst(split))
        let heads = try source.signedHeads(of: document, since: held.reduce(VersionVector()) { $0.merging($1.vector) })
        let run = try ChangeRunMessage(encoding: rest, of: document, heads: heads, outside: { stamps[$0] })
        let honest = SyncMessage.run(run).encoded(format: SyncMessage.runFormatVersion)
        func receiver(_ name: String) throws -> ChangeLogStore {
            let store = try ChangeLogStore(
                inMemoryNamed: "\(name)-\(seed)", key: DeviceKey(), deviceName: "receiver",
                clock: ManualClock(start: Fixtures.start))
            _ = try store.ingest(trusting: held)
            return store
        }
        // What the honest run leaves: its changes that its heads vouch for.
        let reference = try receiver("honest")
        var honestDriver = try SyncDriver(store: reference, role: .responder, id: 9)
        _ = try honestDriver.receive(honest)
        #expect(honestDriver.report.runsReceived == 1, "seed \(seed)")
        let full = try reference.vector(of: document)
        let honestHashes = Set(changes.map(\.hash))
        for round in 0..<40 {
            var bytes = honest
            for _ in 0..<(1 + Int(random.next() % 3)) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[at] ^= UInt8(truncatingIfNeeded: 1 + random.next() % 255)
                case 1: bytes.removeSubrange(at...)
                default: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                }
                if bytes.isEmpty { bytes = [SyncMessage.runFormatVersion] }
            }
            let receiver = try receiver("mutated-\(round)")
            let before = try receiver.vector(of: document)
            var driver = try SyncDriver(store: receiver, role: .responder, id: 9)
            _ = try driver.receive(bytes)
            let after = try receiver.vector(of: document)
            // The heads vouch per device: a mutation may leave another device's changes whole. What enters the log
            // is always one of the honest changes, and never more than the honest run brings.
            let logged = try receiver.changes(of: document).map(\.hash)
            #expect(logged.allSatisfy(honestHashes.contains), "seed \(seed), round \(round): a forged change entered")
            #expect(before.isContained(in: after) && after.isContained(in: full), "seed \(seed), round \(round)")
            let report = try receiver.verify()
            #expect(report.isSound, "seed \(seed), round \(round): \(report)")
        }
    }
}
