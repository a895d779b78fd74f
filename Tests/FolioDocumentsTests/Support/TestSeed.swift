import FolioCore
import Foundation

/// The seed of a randomized test: `FOLIO_SEED` from the environment to replay a failure, otherwise a fresh one.
///
/// Every randomized test prints its seed and names it in its failure messages, so a failing run can be replayed.
enum TestSeed {
    static func make(_ test: String) -> UInt64 {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["FOLIO_SEED"], let value = UInt64(text) {
            seed = value
        } else {
            seed = UInt64.random(in: 0...UInt64.max)
        }
        print("\(test): seed \(seed) (replay with FOLIO_SEED=\(seed))")
        return seed
    }
}

extension SplitMix64 {
    /// A uniformly chosen integer in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }
}
