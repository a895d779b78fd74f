import Synchronization

/// The changes each grantee (a server token, or an app's user, across all their connections) and each library may
/// send a second (``ServerLimits/changesPerSecond``): before the server takes a message that uploads (changes, a run,
/// blobs), the grantee's and the library's allowances must not be in debt; the message then takes its cost from both.
/// A connection whose grantee or library is in debt is not read until the debt is paid, so a flood waits in its own
/// sockets, not in the server's queues, whichever connections of the grantee it comes by, and other libraries'
/// messages are read as before.
///
/// Each allowance is a bucket of ``burstSeconds`` seconds of the rate, refilled at the rate by a monotonic clock; a
/// message's cost (its changes, at least one; a `blobs` message one for each 64 KiB) may take it below zero, by as much
/// as the next message then waits for.
final class ChangeQuota: Sendable {
    /// Changes a second per grantee, and per library.
    let rate: Int
    /// Seconds of the rate a grantee may send at once, after being idle.
    static let burstSeconds = 10

    private struct Bucket {
        var tokens: Double
        var refilled: ContinuousClock.Instant
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    init(perSecond rate: Int) {
        self.rate = max(1, rate)
    }

    private var capacity: Double { Double(rate) * Double(Self.burstSeconds) }

    /// The key of a library's allowance (grantees' keys start with `tok_` or `user:`).
    static func libraryKey(_ library: String) -> String { "library:" + library }

    /// Takes `cost` from the allowances of `keys` at `now` if none is in debt, and says zero; otherwise takes nothing
    /// and says how long until the deepest debt is paid.
    func admit(_ keys: [String], cost: Int, at now: ContinuousClock.Instant = .now) -> Duration {
        let capacity = self.capacity
        let rate = Double(self.rate)
        let debt = buckets.withLock { buckets -> Double in
            var debt = 0.0
            for key in keys {
                var bucket = buckets[key] ?? Bucket(tokens: capacity, refilled: now)
                if now > bucket.refilled {
                    bucket.tokens = min(capacity, bucket.tokens + Self.seconds(now - bucket.refilled) * rate)
                    bucket.refilled = now
                }
                buckets[key] = bucket
                debt = max(debt, -bucket.tokens)
            }
            guard debt <= 0 else { return debt }
            for key in keys { buckets[key]!.tokens -= Double(max(1, cost)) }
            return 0
        }
        guard debt > 0 else { return .zero }
        return .milliseconds(Int64((debt / rate * 1000).rounded(.up)))
    }

    /// Forgets the allowances of keys not among `kept` that have refilled by `now` (what they would start with anyway),
    /// so that the quota holds one bucket per grantee or library with a connection or a debt.
    func prune(keeping kept: Set<String>, at now: ContinuousClock.Instant = .now) {
        let capacity = self.capacity
        let rate = Double(self.rate)
        buckets.withLock { buckets in
            buckets = buckets.filter { key, bucket in
                kept.contains(key) || bucket.tokens + Self.seconds(now - bucket.refilled) * rate < capacity
            }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
