// Helpers shared by the test targets: seeds that replay randomized tests, and property-check bookkeeping.
import Foundation
import FolioCore
import Testing

/// The seed of a randomized test: `FOLIO_SEED` from the environment to replay a failure, otherwise a fresh one.
///
/// Every randomized test prints its seed and puts it in its failure messages, so a failing run can be replayed.
public enum TestSeed {
    public static func make(_ test: String = #function, file: String = #fileID) -> UInt64 {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["FOLIO_SEED"], let value = UInt64(text) {
            seed = value
        } else {
            seed = UInt64.random(in: 0...UInt64.max)
        }
        print("\(file) \(test): seed \(seed) (replay with FOLIO_SEED=\(seed))")
        return seed
    }
}

extension SplitMix64 {
    /// A uniformly chosen integer in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// `true` with probability `numerator / denominator`.
    public mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        Int.random(in: 0..<denominator, using: &self) < numerator
    }

    /// One of `choices`.
    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[int(in: 0...(choices.count - 1))]
    }
}

/// Records failures of a randomized property with the seed and iteration that reproduce them, and tells the loop to
/// stop after a few so one broken law does not bury the report.
public struct PropertyCheck {
    public let seed: UInt64
    public var iteration = 0
    public private(set) var failures = 0

    public init(seed: UInt64) {
        self.seed = seed
    }

    public var shouldStop: Bool { failures >= 3 }

    public mutating func expect(
        _ condition: Bool, _ message: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if !condition { failures += 1 }
        #expect(condition, "seed \(seed) (replay with FOLIO_SEED=\(seed)), iteration \(iteration): \(message())",
                sourceLocation: sourceLocation)
    }
}
