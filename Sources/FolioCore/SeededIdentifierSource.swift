import Synchronization

/// A deterministic source: the same seed gives the same sequence of identities, on every machine.
///
/// The values are shaped like version 4 UUIDs so that they read like the real thing in reports.
public final class SeededIdentifierSource: IdentifierSource {
    // Mutex makes the shared generator state safe to use from any task.
    private let state: Mutex<SplitMix64>

    /// Creates a source whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = Mutex(SplitMix64(seed: seed))
    }

    /// Returns the next identity of the sequence.
    public func next() -> UUIDBytes {
        state.withLock { generator in
            let high = generator.next() & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
            let low = generator.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
            return UUIDBytes(high: high, low: low)
        }
    }
}
