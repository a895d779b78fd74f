/// A token bucket: at most `rate` events a second on average, in bursts of at most `rate`; it starts full.
///
/// Refilled from the time that passed between takes, by a monotonic clock (`ContinuousClock`), so that it holds two
/// numbers whatever the rate and costs nothing while idle.
struct TokenBucket {
    /// Tokens added a second, and the most the bucket holds.
    let rate: Double
    private var tokens: Double
    private var refilled: ContinuousClock.Instant

    /// A full bucket of `rate` tokens (at least one) refilled at `rate` a second.
    init(perSecond rate: Int, now: ContinuousClock.Instant = .now) {
        self.rate = Double(max(1, rate))
        tokens = self.rate
        refilled = now
    }

    /// Takes a token if there is one at `now`.
    mutating func take(at now: ContinuousClock.Instant = .now) -> Bool {
        if now > refilled {
            let elapsed = now - refilled
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(rate, tokens + seconds * rate)
            refilled = now
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
