import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Every durability behaves the same; they differ only in when (and whether) SQLite syncs.
@Suite(.workPool) struct DurabilityTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test(arguments: [Durability.normal, Durability.full, Durability.off])
    func appendIngestAndReopenBehaveTheSame(durability: Durability) throws {
        let history = try SampleHistory.make(in: directory)
        let device = Device.named("Durable")
        let clock = Fixtures.clock()
        var store = try directory.openStore(for: device, clock: clock, durability: durability)
        #expect(store.durability == durability)

        // Everything but b3 arrives one change at a time in reverse, so all but the first change made waits first.
        var applied: [ChangeID] = []
        for change in history.changes.filter({ $0 != history["b3"] }).reversed() {
            applied += try store.ingest(trusting: [change]).applied
            try store.checkInvariants()
        }
        #expect(applied == Causality.sorted(history.changes.filter { $0 != history["b3"] }).map(\.id))
        let local = try store.append((1...3).map { Fixtures.edit("local \($0)") }, to: history.document)
        try store.checkInvariants()
        #expect(local.map(\.id.seq) == [1, 2, 3])
        #expect(local[0].parents == [history["c3"].hash])
        #expect(local[0].lamport == 7)
        try store.checkpoints.putBlob(Data("blob".utf8))
        try store.checkInvariants()
        try store.checkpoints.save(of: history.document, at: history["c3"].vector, contents: Data("at c3".utf8))
        try store.checkInvariants()
        try store.close()

        store = try directory.openStore(for: device, clock: clock, durability: durability)
        try store.checkInvariants()
        #expect(try store.changeCount() == 12)
        #expect(try store.checkpoints.latest(of: history.document)?.contents == Data("at c3".utf8))
        try store.ingest(trusting: [history["b3"]])
        try store.checkInvariants()
        let merge = try store.append(Fixtures.edit("merge"), to: history.document)
        try store.checkInvariants()
        #expect(merge.id.seq == 4)
        #expect(merge.parents == [local[2].hash, history["b3"].hash].sorted())
        #expect(try store.heads(of: history.document) == [merge])
        #expect(try store.verify().changes == 14)
    }
}
