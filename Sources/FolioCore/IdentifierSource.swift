#if canImport(CUUID)
import CUUID
#endif
#if canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Where new identities come from.
///
/// Production code uses ``RandomIdentifierSource`` (libuuid); tests and the simulator inject a
/// ``SeededIdentifierSource`` so that every run makes the same identities.
public protocol IdentifierSource: Sendable {
    /// Returns sixteen bytes never returned before by this source.
    func next() -> UUIDBytes
}

/// Random (version 4) UUIDs from the system's libuuid.
public struct RandomIdentifierSource: IdentifierSource {
    /// Creates the source.
    public init() {}

    /// Returns a fresh random UUID.
    public func next() -> UUIDBytes {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBufferPointer { buffer in
            uuid_generate_random(buffer.baseAddress!)
        }
        return UUIDBytes(bytes: bytes)
    }
}

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

/// A small, fast, well-distributed generator (Steele, Lea and Flood's SplitMix64); deterministic across platforms.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
