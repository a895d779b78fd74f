import NIOCore
import NIOPosix
import Synchronization
import WSClient

/// One WebSocket client run on an event loop of its own, given up when the server has not accepted the connection
/// (answered the upgrade) within a time limit, or when the task is cancelled before it did.
///
/// The WebSocket client waits for the server's answer to its upgrade even once the server's side of the socket is
/// closed (a server killed between reading the request and answering it): the connection's own event loop is the one
/// handle on that socket, and shutting it down ends the attempt. An attempt that does not end within a few seconds of
/// that (one whose connection had not started when the loop went) is abandoned: its task holds no socket any more.
/// Each attempt costs a thread while it runs.
struct ConnectionAttempt: Sendable {
    /// How an attempt ended.
    enum End {
        /// The client returned (the server's close frame, if any) or threw.
        case finished(close: WebSocketCloseFrame?, failure: (any Error)?)
        /// The server had not accepted it within the limit, or the task was cancelled before it did.
        case gaveUp(cancelled: Bool)
    }

    /// How long an attempt given up may take to end once its loop is shut down before it is abandoned.
    static let grace: Duration = .seconds(5)

    private let events = Events()

    /// Marks the connection accepted: from then on it is never given up (the caller's handler runs; call it first).
    func accepted() { events.state.withLock { $0.accepted = true } }

    /// Runs the client `make` builds on `loop` (its event loop group), in a task that prefers `executor` (where its
    /// handler runs), and returns how it ended.
    func run(
        acceptTimeout: Duration, on executor: any TaskExecutor,
        _ make: (MultiThreadedEventLoopGroup) -> WebSocketClient
    ) async -> End {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = make(loop)
        let events = self.events
        let attempt = Task(executorPreference: executor) {
            do {
                events.post(.finished(close: try await client.run(), failure: nil))
            } catch {
                events.post(.finished(close: nil, failure: error))
            }
        }
        let watchdog = Task {
            try await Task.sleep(for: acceptTimeout)
            events.giveUp(cancelled: false)
        }
        let end = await withTaskCancellationHandler {
            var gaveUp: End?
            while true {
                switch await events.next() {
                case .finished(let close, let failure):
                    return gaveUp ?? .finished(close: close, failure: failure)
                case .gaveUp(let cancelled):
                    guard gaveUp == nil else { continue }
                    gaveUp = .gaveUp(cancelled: cancelled)
                    // Closes the socket, if there is one yet: the client then fails at once.
                    try? await loop.shutdownGracefully()
                    Task {
                        try? await Task.sleep(for: Self.grace)
                        events.post(.abandoned)
                    }
                case .abandoned:
                    return gaveUp ?? .gaveUp(cancelled: false)
                }
            }
        } onCancel: {
            // An attempt the server accepted ends as cancelled clients do (a close handshake); one it has not is given up.
            attempt.cancel()
            events.giveUp(cancelled: true)
        }
        watchdog.cancel()
        try? await loop.shutdownGracefully()
        return end
    }

    /// What happened to the attempt, in order, for the one waiting on it (not cancellation-aware: a cancelled caller
    /// still waits for the client's own end, so that its handler never runs after the caller returned).
    private final class Events: Sendable {
        enum Event {
            case finished(close: WebSocketCloseFrame?, failure: (any Error)?)
            case gaveUp(cancelled: Bool)
            case abandoned
        }

        struct State {
            var queue: [Event] = []
            var waiter: CheckedContinuation<Event, Never>?
            var accepted = false
            var gaveUp = false
        }

        let state = Mutex(State())

        func post(_ event: Event) {
            let waiter = state.withLock { state -> CheckedContinuation<Event, Never>? in
                guard let waiter = state.waiter else {
                    state.queue.append(event)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: event)
        }

        /// Gives the attempt up unless the server accepted it (once).
        func giveUp(cancelled: Bool) {
            let giving = state.withLock { state in
                guard !state.accepted, !state.gaveUp else { return false }
                state.gaveUp = true
                return true
            }
            if giving { post(.gaveUp(cancelled: cancelled)) }
        }

        func next() async -> Event {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Event? in
                    guard state.queue.isEmpty else { return state.queue.removeFirst() }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
