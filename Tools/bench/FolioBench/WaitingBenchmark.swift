import FolioCore
import FolioStore
import Foundation

/// `waiting`: changes that arrive before what they depend on. A history of 8 devices is delivered backwards, one
/// change per `ingest` call (each waits in the pending table), until the first arrives and the rest follow it into
/// the log. The cost per change should not grow with the number waiting: 20,000 waiting against 2,000, and against
/// the same changes delivered in causal order, one per call, side by side in one run.
enum WaitingBenchmark {
    static let small = benchScale(2_000)
    static let large = benchScale(20_000)
    static let rounds = 3

    static func run() throws {
        let smallBackwards = try medianMicroseconds(changeCount: small, backwards: true)
        let largeBackwards = try medianMicroseconds(changeCount: large, backwards: true)
        let largeForwards = try medianMicroseconds(changeCount: large, backwards: false)
        let growth = largeBackwards / smallBackwards
        let ratio = largeBackwards / largeForwards
        printTable("waiting: a history delivered backwards, one change per ingest, median of \(rounds) (\(machineDescription()))", [
            ("µs per change, \(small) backwards", format(smallBackwards, 1)),
            ("µs per change, \(large) backwards", format(largeBackwards, 1)),
            ("µs per change, \(large) in causal order", format(largeForwards, 1)),
            ("growth \(large)/\(small) backwards", format(growth, 2)),
            ("ratio backwards/causal order", format(ratio, 2)),
            ("peak memory MiB", format(peakMemoryMiB())),
        ])
        printJSON(["us_small": (smallBackwards * 10).rounded() / 10, "us_large": (largeBackwards * 10).rounded() / 10,
                   "us_causal": (largeForwards * 10).rounded() / 10, "growth": (growth * 100).rounded() / 100,
                   "ratio": (ratio * 100).rounded() / 100])
    }

    /// Median microseconds per change of delivering `changeCount` changes one per call, backwards or in order.
    static func medianMicroseconds(changeCount: Int, backwards: Bool) throws -> Double {
        let workload = MultiDeviceWorkload(changeCount: changeCount, deviceCount: 8, seed: 31)
        let order = backwards ? Array(workload.changes.reversed()) : workload.changes
        var samples: [Double] = []
        for _ in 0..<rounds {
            let scratch = try ScratchDirectory("waiting")
            defer { scratch.cleanUp() }
            let store = try ChangeLogStore(
                at: scratch.file("folio.sqlite"),
                device: Device(id: DeviceID(using: SeededIdentifierSource(seed: 32)), name: "receiver"))
            samples.append(try measure {
                for change in order { try store.ingest([change]) }
            })
            let stored = try store.changeCount()
            precondition(stored == changeCount, "every change is in the log")
            try store.close()
        }
        return median(samples) * 1e6 / Double(changeCount)
    }
}
