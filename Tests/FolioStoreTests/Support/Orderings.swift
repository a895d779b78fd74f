import FolioCore
import FolioTesting
import Foundation

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
