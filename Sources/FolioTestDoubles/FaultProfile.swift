/// How unreliable an in-memory link is: each message may be dropped, duplicated, delayed, and delivered out of order.
///
/// Probabilities are between 0 and 1. Faults are drawn from a seeded generator, so a run is reproduced by its seed.
public struct FaultProfile: Hashable, Sendable {
    /// The chance that a message is lost.
    public var drop: Double
    /// The chance that a message is delivered twice (each copy independently delayed).
    public var duplicate: Double
    /// The chance that a message is held back for 1 to ``maxDelay`` ticks.
    public var delay: Double
    /// The longest delay, in ticks.
    public var maxDelay: Int
    /// The chance that a delivery picks a random message among those due instead of the oldest.
    public var reorder: Double

    /// Creates a profile.
    ///
    /// - Precondition: the probabilities are in `0...1` and `maxDelay >= 1`.
    public init(drop: Double = 0, duplicate: Double = 0, delay: Double = 0, maxDelay: Int = 3, reorder: Double = 0) {
        for probability in [drop, duplicate, delay, reorder] {
            precondition((0...1).contains(probability), "a probability must be between 0 and 1, not \(probability)")
        }
        precondition(maxDelay >= 1, "the longest delay must be at least one tick")
        self.drop = drop
        self.duplicate = duplicate
        self.delay = delay
        self.maxDelay = maxDelay
        self.reorder = reorder
    }

    /// Every message arrives once, in order, at once.
    public static let reliable = FaultProfile()

    /// A bad network: a fifth of the messages lost, a fifth duplicated, a third delayed, half reordered.
    public static let unreliable = FaultProfile(drop: 0.2, duplicate: 0.2, delay: 0.3, maxDelay: 3, reorder: 0.5)
}
