import FolioCore
import FolioStore
import FolioSync
import Logging

/// Keeps a store in sync with its library on a Folio server for as long as it runs: one connection at a time,
/// local commits sent as they happen, others' changes applied as the server passes them on, and after any failure a
/// new connection after a capped, jittered exponential backoff (``Backoff``). A refused token (close code 4401,
/// 4402, 4403 or 4405) does not become valid by waiting: the sync then reports ``ServerSyncEvent/refused(code:reason:)`` and stops.
///
/// Every event goes to the handler given at start, in order, one at a time: nothing more is applied before the
/// handler returns, so an app that shows what arrived never falls behind the log. Frames that arrive meanwhile wait
/// in memory and are applied together afterwards; past 8 MiB of them the connection stops reading until the next
/// batch is taken.
public final class LiveSync: Sendable {
    private let task: Task<Void, Never>
    private let presence = PresenceBoard()

    /// Starts syncing `store` with `endpoint`.
    ///
    /// - Parameters:
    ///   - store: the local store.
    ///   - endpoint: the library on the server.
    ///   - backoff: the waits between attempts.
    ///   - seed: seeds the jitter and session numbers; `nil` for the system's randomness.
    ///   - logger: where connection problems are logged.
    ///   - executor: where the connection's work runs (it blocks on the store); a queue of its own when nil. An
    ///     `onEvent` that runs on the same executor is called without waking another thread.
    ///   - onEvent: called with every event, in order.
    public init(
        store: ChangeLogStore, endpoint: ServerEndpoint, backoff: Backoff = Backoff(), seed: UInt64? = nil,
        logger: Logger = Logger(label: "folio.client"), executor: BlockingWorkExecutor? = nil,
        onEvent: @escaping @Sendable (ServerSyncEvent) async -> Void
    ) {
        // The connection's store work blocks; it runs on a queue of its own, off the cooperative pool.
        let executor = executor ?? BlockingWorkExecutor(label: "folio.live-sync")
        let presence = self.presence
        task = Task(executorPreference: executor) {
            var random = SplitMix64(seed: seed ?? UInt64.random(in: .min ... .max))
            var attempt = 0
            while !Task.isCancelled {
                attempt += 1
                await onEvent(.connecting(attempt: attempt))
                var connection = ServerConnection(
                    endpoint: endpoint, store: store, mode: .live, sessionID: random.next(), logger: logger)
                connection.executor = executor
                connection.presence = presence
                let started = ContinuousClock.now
                var reason: String
                do {
                    _ = try await connection.run(onEvent: onEvent)
                    reason = "the connection ended"
                } catch let ended as ServerConnection.Ended {
                    reason = ended.description
                    if let code = ended.refusal, !Task.isCancelled {
                        logger.warning(
                            "the server refused the token; not connecting again",
                            metadata: ["code": .stringConvertible(code), "reason": .string(reason)])
                        await onEvent(.refused(code: code, reason: reason))
                        break
                    }
                    if ended.caughtUp && ContinuousClock.now - started >= backoff.resetAfter { attempt = 0 }
                } catch {
                    reason = "\(error)"
                }
                if Task.isCancelled { break }
                let wait = backoff.delay(attempt: max(attempt - 1, 0), using: &random)
                await onEvent(.disconnected(reason: reason, retryIn: wait))
                try? await Task.sleep(for: wait)
            }
            await onEvent(.stopped)
        }
    }

    /// Shows this device to the library's other connected devices in `document`: `state` is the bytes of a
    /// `PresenceState` (at most `SyncFrame.maximumPresenceBytes`), or empty to show nothing there any more. The
    /// latest state of each document is sent (at most 20 times a second, in at most 16 documents at once: a state
    /// for a further document is not taken; set it again once another is cleared), and sent again after every
    /// reconnection, once the server said it relays presence.
    /// Never stored: nothing of it stays once the connection ends.
    public func setPresence(_ state: [UInt8], in document: DocumentID) {
        guard state.count <= SyncFrame.maximumPresenceBytes else { return }
        presence.set(state, in: document)
    }

    /// Stops: closes the connection (or the wait for the next) and returns once the last event was handled.
    public func stop() async {
        task.cancel()
        await task.value
    }

    deinit { task.cancel() }
}
