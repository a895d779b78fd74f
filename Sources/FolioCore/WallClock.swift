/// A source of wall-clock time, injected so that tests and the simulator control it.
public protocol WallClock: Sendable {
    /// The current time as this device sees it.
    func now() -> Timestamp
}
