import FolioCore
import FolioStore
import Foundation

/// `sync-delta`: the time to find the 100 changes a peer lacks, in a log of 1,000,000 changes and in one of 1,000
/// (8 devices each). The cost should follow what is missing, not the history.
enum SyncDeltaBenchmark {
    static let missing = 100
    static let repetitions = 200

    static func run() throws {
        let large = try measureDelta(changeCount: benchScale(1_000_000))
        let small = try measureDelta(changeCount: 1_000)
        printTable(
            "sync-delta: find the \(missing) changes a peer lacks, median of \(repetitions) (\(machineDescription()))",
            [
                ("1,000,000-change log ms", format(large, 3)),
                ("1,000-change log ms", format(small, 3)),
                ("growth large/small", format(large / small, 2)),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "ms_large": (large * 1000).rounded() / 1000, "ms_small": (small * 1000).rounded() / 1000,
            "growth": (large / small * 100).rounded() / 100,
        ])
    }

    /// Median milliseconds of `changes(of:since:)` for a peer missing the last `missing` changes.
    static func measureDelta(changeCount: Int) throws -> Double {
        let workload = MultiDeviceWorkload(changeCount: changeCount, deviceCount: 8, seed: 21)
        let scratch = try ScratchDirectory("sync-delta")
        defer { scratch.cleanUp() }
        let store = try ChangeLogStore(
            at: scratch.file("folio.sqlite"), key: DeviceKey(using: SeededIdentifierSource(seed: 22)),
            deviceName: "server")
        for start in stride(from: 0, to: workload.changes.count, by: 10_000) {
            let batch = workload.changes[start..<min(start + 10_000, workload.changes.count)]
            try store.ingest(Array(batch), heads: workload.heads(for: batch))
        }
        let peer = workload.vector(ofFirst: changeCount - missing)
        var samples: [Double] = []
        for _ in 0..<repetitions {
            var found = 0
            samples.append(try measure { found = try store.changes(of: workload.document, since: peer).count })
            precondition(found == missing, "the peer lacks exactly \(missing) changes, found \(found)")
        }
        try store.close()
        return median(samples) * 1000
    }
}
