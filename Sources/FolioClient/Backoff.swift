import FolioCore

/// How long a client waits before it connects again: capped exponential backoff with jitter.
///
/// The n-th wait after a failure (n from 0) is drawn uniformly between half and all of
/// `min(maximum, initial × 2ⁿ)`, so that devices that lost the server together do not come back together. A
/// connection that lasted ``resetAfter`` starts again from `initial`.
public struct Backoff: Hashable, Sendable {
    /// The first wait's ceiling.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration
    /// How long a connection must have lasted for the next failure to count as the first.
    public var resetAfter: Duration

    /// Creates a backoff.
    public init(
        initial: Duration = .milliseconds(100), maximum: Duration = .seconds(30), resetAfter: Duration = .seconds(10)
    ) {
        self.initial = initial
        self.maximum = maximum
        self.resetAfter = resetAfter
    }

    /// The wait before attempt `attempt + 1` (0 is the first retry), drawn with `random`.
    public func delay(attempt: Int, using random: inout some RandomNumberGenerator) -> Duration {
        let ceiling = initial * Double(1 << UInt64(min(max(attempt, 0), 30)))
        let capped = min(ceiling, maximum)
        let nanoseconds = Double(capped.components.seconds) * 1e9 + Double(capped.components.attoseconds) / 1e9
        let fraction = Double.random(in: 0.5...1, using: &random)
        return .nanoseconds(Int64(nanoseconds * fraction))
    }
}
