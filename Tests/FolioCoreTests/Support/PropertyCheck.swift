import Testing

/// Records failures of a randomized property with the seed and iteration that reproduce them, and tells the loop to
/// stop after a few so one broken law does not bury the report.
struct PropertyCheck {
    let seed: UInt64
    var iteration = 0
    private(set) var failures = 0

    init(seed: UInt64) {
        self.seed = seed
    }

    var shouldStop: Bool { failures >= 3 }

    mutating func expect(
        _ condition: Bool, _ message: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if !condition { failures += 1 }
        #expect(condition, "seed \(seed) (replay with FOLIO_SEED=\(seed)), iteration \(iteration): \(message())",
                sourceLocation: sourceLocation)
    }
}
