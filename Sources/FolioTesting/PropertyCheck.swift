import Testing

/// Records failures of a randomized property with the seed and iteration that reproduce them, and tells the loop to
/// stop after a few so one broken law does not bury the report.
public struct PropertyCheck {
    /// The seed the cases are drawn from.
    public let seed: UInt64
    /// The case being checked; the loop sets it, and failures name it.
    public var iteration = 0
    /// How many expectations failed.
    public private(set) var failures = 0

    /// Starts checking cases drawn from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
    }

    /// Whether enough failed (three) that the loop should stop.
    public var shouldStop: Bool { failures >= 3 }

    /// Records an expectation (a swift-testing `#expect`) whose failure message names the seed and the iteration.
    public mutating func expect(
        _ condition: Bool, _ message: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if !condition { failures += 1 }
        #expect(
            condition, "seed \(seed) (replay with FOLIO_SEED=\(seed)), iteration \(iteration): \(message())",
            sourceLocation: sourceLocation)
    }
}
