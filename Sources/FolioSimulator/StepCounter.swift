import Synchronization

/// Counts the steps runs have done, read from any thread while they run: for a progress line while a long scenario
/// runs (``Simulator/stepCounter``, ``Fuzzer/stepCounter``).
public final class StepCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// A counter at zero.
    public init() {}

    /// The steps done so far.
    public var count: Int { value.load(ordering: .relaxed) }

    /// Counts one step done.
    func add() {
        value.add(1, ordering: .relaxed)
    }
}
