import ArgumentParser

/// The ranges the tool's counts are checked against before anything runs (exit 2 outside them): wide enough for any
/// real use, narrow enough that a slip of the keyboard (a few digits too many) is refused at once rather than run,
/// or allocated, for hours.
enum CountBounds {
    /// `fuzz --steps`: steps of one generated scenario.
    static let steps = 1...100_000
    /// `fuzz --jobs`: scenarios running at once.
    static let jobs = 1...256
    /// `fuzz --devices`: devices of one generated scenario (the generator names eight).
    static let devices: ClosedRange<UInt64> = 1...8
    /// `fuzz --seeds`: how many seeds one run goes through.
    static let seeds: ClosedRange<UInt64> = 1...1_000_000_000
    /// `log append --count`: changes appended (0: until killed).
    static let appendCount = 0...10_000_000
    /// `log append --batch`: changes per transaction.
    static let batch = 1...100_000
    /// `log sync --rounds`: rounds of append-then-sync.
    static let rounds = 1...1_000_000
    /// `log sync --append`: edits appended before each round.
    static let appendPerRound = 0...100_000
    /// `log exercise --edits`: edits each device makes offline.
    static let edits = 1...100_000

    /// `LOW...HIGH`, as the messages and the help write a range.
    static func written<Bound>(_ range: ClosedRange<Bound>) -> String {
        "\(range.lowerBound)...\(range.upperBound)"
    }

    /// Checks that `value`, given to `option`, is in `range`.
    ///
    /// - Parameter note: what follows the range in the message, such as ` (0: until killed)`.
    /// - Throws: a `ValidationError` (exit 2) naming the option, the range and the value:
    ///   `--steps must be within 1...100000, not 99999999999`.
    static func check<Bound: Comparable>(
        _ value: Bound, of option: String, within range: ClosedRange<Bound>, note: String = ""
    ) throws(ValidationError) {
        guard range.contains(value) else {
            throw ValidationError("\(option) must be within \(written(range))\(note), not \(value)")
        }
    }
}
