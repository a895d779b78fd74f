// Helpers shared by the test targets: seeds that replay randomized tests, and property-check bookkeeping.
import Foundation
import FolioCore
import Testing

/// The seed of a randomized test. By default a fixed one, derived from the test's file and name, so that every run
/// (CI's included) draws the same cases; `FOLIO_SEED=N` replays seed N; `FOLIO_RANDOM_SEEDS=1` draws a fresh seed
/// for every test, to explore beyond the fixed ones.
///
/// Every randomized test prints its seed and puts it in its failure messages, so a failing run can be replayed.
public enum TestSeed {
    public static func make(_ test: String = #function, file: String = #fileID) -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        let seed: UInt64
        if let text = environment["FOLIO_SEED"], let value = UInt64(text) {
            seed = value
        } else if environment["FOLIO_RANDOM_SEEDS"] == "1" {
            seed = UInt64.random(in: 0...UInt64.max)
        } else {
            seed = fixed(for: "\(file) \(test)")
        }
        print("\(file) \(test): seed \(seed) (replay with FOLIO_SEED=\(seed))")
        return seed
    }

    /// The fixed seed of the test named `name`: its FNV-1a hash, the same on every machine and run.
    public static func fixed(for name: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
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
