import Synchronization

/// A clock that moves only when told to: for tests and simulations.
public final class ManualClock: WallClock {
    // Mutex lets tasks read the time while a test advances it.
    private let current: Mutex<Timestamp>

    /// Creates a clock showing `start`.
    public init(start: Timestamp) {
        current = Mutex(start)
    }

    /// The time the clock shows.
    public func now() -> Timestamp {
        current.withLock { $0 }
    }

    /// Moves the clock forward (or back, for a negative amount).
    public func advance(byMilliseconds milliseconds: Int64) {
        current.withLock { $0 = $0.advanced(by: milliseconds) }
    }

    /// Sets the time shown.
    public func set(_ time: Timestamp) {
        current.withLock { $0 = time }
    }
}
