import FolioCore
import Foundation

/// The seed of a randomized test: `FOLIO_SEED` from the environment to replay a failure, otherwise a fresh one.
///
/// Every randomized test names its seed in its failure messages, so a failing run can be replayed exactly.
enum TestSeed {
    static func make() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["FOLIO_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 0...UInt64.max)
    }
}
