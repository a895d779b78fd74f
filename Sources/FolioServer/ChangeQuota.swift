import Synchronization

/// The changes each grantee (a server token, or an app's user) may send a second, shared by all its connections
/// (``ServerLimits/changesPerSecond``): a message of changes is taken when it arrives, and the connection that sent
/// it is then not read until the grantee's allowance has paid for it. One grantee's flood so waits in its own
/// sockets, not in the server's queues, and the other grantees' messages are read as before.
///
/// Each grantee has a bucket of ``burstSeconds`` seconds of its rate, refilled at its rate by a monotonic clock; a
/// message takes as many as it carries changes, and may take the bucket below zero, by as much as the grantee then
/// waits for.
final class ChangeQuota: Sendable {
    /// Changes a second per grantee.
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

    /// Charges `grantee` for `changes` at `now`: how long its connection waits before its next message is read
    /// (zero while it is within its allowance).
    func charge(_ grantee: String, changes: Int, at now: ContinuousClock.Instant = .now) -> Duration {
        guard changes > 0 else { return .zero }
        let capacity = self.capacity
        let rate = Double(self.rate)
        let left = buckets.withLock { buckets -> Double in
            var bucket = buckets[grantee] ?? Bucket(tokens: capacity, refilled: now)
            if now > bucket.refilled {
                let elapsed = now - bucket.refilled
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                bucket.tokens = min(capacity, bucket.tokens + seconds * rate)
                bucket.refilled = now
            }
            bucket.tokens -= Double(changes)
            buckets[grantee] = bucket
            return bucket.tokens
        }
        guard left < 0 else { return .zero }
        return .milliseconds(Int64((-left / rate * 1000).rounded(.up)))
    }

    /// Forgets the buckets of grantees not among `connected` that have refilled by `now` (what they would start
    /// with anyway), so that the quota holds one bucket per grantee with a connection or a debt.
    func prune(keeping connected: Set<String>, at now: ContinuousClock.Instant = .now) {
        let capacity = self.capacity
        let rate = Double(self.rate)
        buckets.withLock { buckets in
            buckets = buckets.filter { grantee, bucket in
                guard !connected.contains(grantee) else { return true }
                let elapsed = now - bucket.refilled
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                return bucket.tokens + seconds * rate < capacity
            }
        }
    }

    /// Grantees with a bucket.
    var count: Int { buckets.withLock { $0.count } }
}
