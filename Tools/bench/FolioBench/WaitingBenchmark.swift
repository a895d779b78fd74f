import FolioCore
import FolioStore
import Foundation

/// `waiting`: what changes that wait for others cost the changes that do not. Device B's chain of n changes arrives
/// without its first, one change per `ingest` call, so all of it waits; then device A's chain of n changes,
/// concurrent with B's, arrives one per call and is applied; then B's first, and B's chain follows it into the log.
/// Applying A's changes should cost the same with 20,000 changes waiting as with 2,000, and about what it costs with
/// none waiting (the peer, measured side by side in the same run).
enum WaitingBenchmark {
    static let small = benchScale(2_000)
    static let large = benchScale(20_000)
    static let rounds = 3

    struct Round {
        /// Microseconds per change: parking B's, applying A's while B's wait, applying A's with nothing waiting.
        var park: Double
        var applyWhileWaiting: Double
        var applyAlone: Double
    }

    static func run() throws {
        let smallRound = try measureRounds(changeCount: small)
        let largeRound = try measureRounds(changeCount: large)
        let growth = largeRound.applyWhileWaiting / smallRound.applyWhileWaiting
        let ratio = largeRound.applyWhileWaiting / largeRound.applyAlone
        printTable(
            "waiting: one change per ingest, n of B's waiting while n of A's are applied, median of \(rounds) (\(machineDescription()))",
            [
                ("µs to park each of \(small)", format(smallRound.park, 1)),
                ("µs to park each of \(large)", format(largeRound.park, 1)),
                ("µs per applied change, \(small) waiting", format(smallRound.applyWhileWaiting, 1)),
                ("µs per applied change, \(large) waiting", format(largeRound.applyWhileWaiting, 1)),
                ("µs per applied change, none waiting", format(largeRound.applyAlone, 1)),
                ("growth \(large)/\(small) waiting", format(growth, 2)),
                ("ratio \(large) waiting/none waiting", format(ratio, 2)),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "us_park_large": (largeRound.park * 10).rounded() / 10,
            "us_apply_small": (smallRound.applyWhileWaiting * 10).rounded() / 10,
            "us_apply_large": (largeRound.applyWhileWaiting * 10).rounded() / 10,
            "us_apply_alone": (largeRound.applyAlone * 10).rounded() / 10,
            "growth": (growth * 100).rounded() / 100, "ratio": (ratio * 100).rounded() / 100,
        ])
    }

    /// The medians of `rounds` rounds with chains of `changeCount` changes.
    static func measureRounds(changeCount: Int) throws -> Round {
        let document = DocumentID(using: SeededIdentifierSource(seed: 30))
        let chainA = try chain(of: "A", seed: 31, count: changeCount, document: document)
        let chainB = try chain(of: "B", seed: 32, count: changeCount, document: document)
        var rounds: [Round] = []
        for _ in 0..<Self.rounds {
            let scratch = try ScratchDirectory("waiting")
            defer { scratch.cleanUp() }
            let receiver = DeviceKey(using: SeededIdentifierSource(seed: 33))
            let store = try ChangeLogStore(at: scratch.file("folio.sqlite"), key: receiver, deviceName: "receiver")
            // Each change arrives alone with its own signed head, as a peer sends its latest change.
            let park = try measure {
                for change in chainB.dropFirst() { try store.ingest([change.change], heads: [change.head]) }
            }
            let applyWhileWaiting = try measure {
                for change in chainA { try store.ingest([change.change], heads: [change.head]) }
            }
            try store.ingest([chainB[0].change], heads: [chainB[0].head])
            let stored = try store.changeCount()
            precondition(stored == 2 * changeCount, "every change is in the log")
            try store.close()

            let alone = try ChangeLogStore(at: scratch.file("alone.sqlite"), key: receiver, deviceName: "receiver")
            let applyAlone = try measure {
                for change in chainA { try alone.ingest([change.change], heads: [change.head]) }
            }
            try alone.close()
            let perChange = 1e6 / Double(changeCount)
            rounds.append(
                Round(
                    park: park * 1e6 / Double(changeCount - 1),
                    applyWhileWaiting: applyWhileWaiting * perChange, applyAlone: applyAlone * perChange))
        }
        return Round(
            park: median(rounds.map(\.park)), applyWhileWaiting: median(rounds.map(\.applyWhileWaiting)),
            applyAlone: median(rounds.map(\.applyAlone)))
    }

    /// `count` changes of one device, each on the one before, made in a store in memory, each with the head its
    /// device signs when it sends it alone.
    static func chain(of name: String, seed: UInt64, count: Int, document: DocumentID) throws -> [(
        change: Change, head: SignedHead
    )] {
        let key = DeviceKey(using: SeededIdentifierSource(seed: seed))
        let store = try ChangeLogStore(inMemoryNamed: name, key: key, deviceName: name)
        var changes: [Change] = []
        for start in stride(from: 0, to: count, by: 1_000) {
            changes += try store.append(
                (start..<min(count, start + 1_000)).map { .edit(Edit(operations: Data("\(name)\($0)".utf8))) },
                to: document)
        }
        return changes.map { ($0, SignedHead(signing: $0, with: key)) }
    }
}
