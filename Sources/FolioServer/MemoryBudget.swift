import Synchronization

/// Bytes of memory the server holds for its clients, counted against one bound for the whole server
/// (``ServerLimits/memoryBudget``).
///
/// Four things are counted: `changes` messages from the moment they are read until their batch is stored, the
/// hellos of the sessions a connection keeps, frames queued for clients, and the presence states connections show. A
/// reader reserves before it hands a message on, and waits while the budget is spent (so the server stops reading,
/// and TCP slows the senders down); kept sessions, queued frames and presence states are charged without waiting
/// (they are bounded per connection), and a new session is refused while the budget is spent.
final class MemoryBudget: Sendable {
    /// The bound, in bytes.
    let limit: Int
    private let used = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// The bytes counted now.
    var inUse: Int { used.load(ordering: .relaxed) }

    /// Whether everything the budget allows is in use.
    var isSpent: Bool { inUse >= limit }

    /// Counts `bytes` if they fit, or if nothing else is counted (a single message larger than the whole budget
    /// still passes, alone).
    func tryReserve(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current == 0 || current + bytes <= limit else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts `bytes`, waiting (checking every few milliseconds) until they fit; false when `deadline` passes, the
    /// task is cancelled or `stillWanted` turns false first, with nothing counted.
    func reserve(
        _ bytes: Int, before deadline: ContinuousClock.Instant, while stillWanted: () -> Bool = { true }
    ) async -> Bool {
        while !tryReserve(bytes) {
            guard ContinuousClock.now < deadline, !Task.isCancelled, stillWanted() else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Counts `bytes` whether or not they fit.
    func charge(_ bytes: Int) {
        used.add(bytes, ordering: .relaxed)
    }

    /// Stops counting `bytes`.
    func release(_ bytes: Int) {
        guard bytes != 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
    }
}
