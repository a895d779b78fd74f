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

extension SplitMix64 {
    /// A uniformly chosen integer in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }
}

/// Every ordering of `items` (n! of them: keep n small).
func permutations<T>(of items: [T]) -> [[T]] {
    guard items.count > 1 else { return [items] }
    var result: [[T]] = []
    for index in items.indices {
        var rest = items
        let first = rest.remove(at: index)
        for tail in permutations(of: rest) { result.append([first] + tail) }
    }
    return result
}

/// `items` cut into consecutive batches of random sizes in `sizes`.
func randomBatches<T>(_ items: [T], sizes: ClosedRange<Int>, using generator: inout SplitMix64) -> [[T]] {
    var batches: [[T]] = []
    var start = 0
    while start < items.count {
        let end = min(items.count, start + generator.int(in: sizes))
        batches.append(Array(items[start..<end]))
        start = end
    }
    return batches
}
