import Synchronization

/// The changes each grantee (a server token, or an app's user, across all their connections) may send a second
/// (``ServerLimits/changesPerSecond``): every upload message (changes, a run, blobs) takes its cost from the grantee's
/// allowance as it arrives, and while the allowance is in debt the server reads nothing more from any connection of
/// the grantee (a new one past its hello included) until the debt is paid. A flood so waits in its own sockets, not in
/// the server's memory or queues, whichever connections it comes by, and other grantees' messages are read as before.
///
/// Each allowance is a bucket of ``burstSeconds`` seconds of the rate, refilled at the rate by a monotonic clock; a
/// message's cost (``SyncMessage/quotaCost``) may take it below zero, by as much as the grantee then waits for.
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

    /// Takes `cost` from `grantee`'s allowance at `now`.
    func charge(_ grantee: String, cost: Int, at now: ContinuousClock.Instant = .now) {
        guard cost > 0 else { return }
        update(grantee, at: now) { $0 -= Double(cost) }
    }

    /// How long until `grantee`'s allowance is out of debt at `now`: zero when it is not in debt.
    func debt(of grantee: String, at now: ContinuousClock.Instant = .now) -> Duration {
        let tokens = update(grantee, at: now) { _ in }
        guard tokens < 0 else { return .zero }
        return .milliseconds(Int64((-tokens / Double(rate) * 1000).rounded(.up)))
    }

    /// Refills `grantee`'s bucket to `now`, applies `change` to its tokens, and returns them.
    @discardableResult
    private func update(_ grantee: String, at now: ContinuousClock.Instant, _ change: (inout Double) -> Void) -> Double
    {
        let capacity = self.capacity
        let rate = Double(self.rate)
        return buckets.withLock { buckets in
            var bucket = buckets[grantee] ?? Bucket(tokens: capacity, refilled: now)
            if now > bucket.refilled {
                bucket.tokens = min(capacity, bucket.tokens + Self.seconds(now - bucket.refilled) * rate)
                bucket.refilled = now
            }
            change(&bucket.tokens)
            buckets[grantee] = bucket
            return bucket.tokens
        }
    }

    /// Forgets the allowances of grantees not among `kept` that have refilled by `now` (what they would start with
    /// anyway), so that the quota holds one bucket per grantee with a connection or a debt.
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
