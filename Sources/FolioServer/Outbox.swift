import Synchronization

/// What a connection's writer sends, in order: frames queued by the library, then, once asked, a close.
///
/// Two kinds of frames share the queue. Frames pushed to the client (other devices' changes, notices) are bounded: a
/// client that does not read falls behind by at most ``limit`` of them or ``byteLimit`` bytes, then its connection is
/// closed (it reconnects and catches up with a session), so one slow client never holds the server's memory or the
/// other connections back. Replies to the client's own session (a catch-up can be larger than any bound) are not
/// counted against it; instead, while the queue is over half full (``isBusy``), the library reads no more of a reply
/// and the connection reads nothing more from the client, until the queue drains to a quarter (``whenDrained(_:)``):
/// replies stream at the pace the client reads, and a client that reads nothing is closed after a timeout. Frames
/// that only the latest one matters of (presence) are offered (``offer(_:)``): dropped while the queue is busy.
final class Outbox: Sendable {
    /// A close the writer sends instead of what is still queued.
    struct Close: Sendable {
        /// The WebSocket close code (RFC 6455 section 7.4).
        var code: UInt16
        /// The reason, sent with the close frame and logged.
        var reason: String
    }

    /// A queued frame, and whether it counts against the bounds.
    struct Frame: Sendable {
        var bytes: [UInt8]
        var bounded: Bool
    }

    private struct Counts {
        /// Everything queued.
        var bytes = 0
        var frames = 0
        /// What counts against the bounds.
        var boundedBytes = 0
        var boundedFrames = 0
        /// Called once the queue drains to a quarter of the bounds, or ends.
        var drained: [@Sendable () -> Void] = []
        var ended = false
        /// Whether the queue's bytes were given back to the memory budget (once it ended).
        var released = false
    }

    let frames: AsyncStream<Frame>
    private let continuation: AsyncStream<Frame>.Continuation
    /// One element when a close is first asked for; ends with the queue.
    let closeRequests: AsyncStream<Void>
    private let closeContinuation: AsyncStream<Void>.Continuation
    private let closing = Mutex<Close?>(nil)
    private let counts = Mutex(Counts())
    let limit: Int
    let byteLimit: Int
    /// Where the queued bytes are counted, server-wide.
    private let budget: MemoryBudget?

    init(limit: Int = 4096, byteLimit: Int = 4 << 20, budget: MemoryBudget? = nil) {
        self.limit = limit
        self.byteLimit = byteLimit
        self.budget = budget
        (frames, continuation) = AsyncStream.makeStream(of: Frame.self, bufferingPolicy: .unbounded)
        (closeRequests, closeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingOldest(1))
    }

    /// Queues a frame pushed to the client; when the pushed frames waiting pass a bound, the connection is closed as
    /// too slow.
    func send(_ frame: [UInt8]) {
        let over = counts.withLock { counts -> String? in
            guard !counts.ended else { return nil }
            budget?.charge(frame.count)
            counts.bytes += frame.count
            counts.frames += 1
            counts.boundedBytes += frame.count
            counts.boundedFrames += 1
            if counts.boundedBytes > byteLimit, counts.boundedFrames > 1 { return "\(byteLimit) bytes" }
            if counts.boundedFrames > limit { return "\(limit) frames" }
            return nil
        }
        if let over {
            close(code: 1008, reason: "the client read too slowly: more than \(over) were waiting")
            return
        }
        continuation.yield(Frame(bytes: frame, bounded: true))
    }

    /// How many frames, and bytes, a queue may hold for ``offer(_:)`` to queue one more: a client keeping up holds
    /// far fewer, and a client that stops reading holds at most this much of others' presence.
    static let offerFrames = 256
    static let offerBytes = 256 << 10

    /// Queues a frame that is worth sending only to a client keeping up (a presence state, which the next one
    /// replaces): queued, counted as pushed, while the queue holds fewer than ``offerFrames`` frames and
    /// ``offerBytes`` bytes and the server's memory budget is not spent; otherwise dropped. Such a frame so never
    /// makes the connection close as too slow, and a client that does not read holds at most 256 KiB of them.
    ///
    /// - Returns: whether the frame was queued (false: dropped, or the queue has ended).
    func offer(_ frame: [UInt8]) -> Bool {
        if budget?.isSpent == true { return false }
        let queued = counts.withLock { counts -> Bool in
            guard !counts.ended, counts.frames < Self.offerFrames, counts.bytes + frame.count <= Self.offerBytes,
                !Self.isBusy(counts, limit: limit, byteLimit: byteLimit)
            else { return false }
            budget?.charge(frame.count)
            counts.bytes += frame.count
            counts.frames += 1
            counts.boundedBytes += frame.count
            counts.boundedFrames += 1
            return true
        }
        if queued { continuation.yield(Frame(bytes: frame, bounded: true)) }
        return queued
    }

    /// Queues a frame of a reply to the client's own session: never refused as slow (the library paces replies with
    /// ``isBusy`` and ``whenDrained(_:)``).
    func reply(_ frame: [UInt8]) {
        counts.withLock { counts in
            guard !counts.ended else { return }
            budget?.charge(frame.count)
            counts.bytes += frame.count
            counts.frames += 1
        }
        continuation.yield(Frame(bytes: frame, bounded: false))
    }

    /// Whether the queue is half full (in frames or bytes): the library reads no more of a reply until it drains.
    /// Never once the queue ended: nothing drains it then, and nothing more is sent.
    var isBusy: Bool {
        counts.withLock { !$0.ended && Self.isBusy($0, limit: limit, byteLimit: byteLimit) }
    }

    private static func isBusy(_ counts: Counts, limit: Int, byteLimit: Int) -> Bool {
        counts.bytes > byteLimit / 2 || counts.frames > limit / 2
    }

    /// Calls `action` once the queue holds at most a quarter of the bounds, or once it ends (a close was asked for, or
    /// the connection ended); at once if either is so already.
    func whenDrained(_ action: @escaping @Sendable () -> Void) {
        let now = counts.withLock { counts -> Bool in
            if counts.ended || Self.isDrained(counts, limit: limit, byteLimit: byteLimit) { return true }
            counts.drained.append(action)
            return false
        }
        if now { action() }
    }

    /// Waits until the queue drains to a quarter of the bounds or ends; past `timeout`, closes the connection (1008)
    /// as too slow. When the waiting task is cancelled (the connection's, at the end of the server's shutdown), the
    /// queue ends, which lets the wait go; otherwise it would wait for ever.
    func waitUntilDrained(orCloseAfter timeout: Duration) async {
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        self.whenDrained { done.resume() }
                    }
                }
                group.addTask {
                    // Cancelled once the queue drained (or by the task's cancellation): nothing more to do.
                    do { try await Task.sleep(for: timeout) } catch { return }
                    // Ends the queue, which lets the wait above go.
                    self.close(
                        code: 1008, reason: "the client read too slowly: it took nothing it was sent for \(timeout)")
                }
                await group.next()
                group.cancelAll()
            }
        } onCancel: {
            finish()
        }
    }

    /// The writer took `frame` off the queue.
    func taken(_ frame: Frame) {
        let actions = counts.withLock { counts -> [@Sendable () -> Void] in
            if !counts.released { budget?.release(frame.bytes.count) }
            counts.bytes -= frame.bytes.count
            counts.frames -= 1
            if frame.bounded {
                counts.boundedBytes -= frame.bytes.count
                counts.boundedFrames -= 1
            }
            guard !counts.drained.isEmpty, Self.isDrained(counts, limit: limit, byteLimit: byteLimit) else { return [] }
            defer { counts.drained = [] }
            return counts.drained
        }
        for action in actions { action() }
    }

    private static func isDrained(_ counts: Counts, limit: Int, byteLimit: Int) -> Bool {
        counts.bytes <= byteLimit / 4 && counts.frames <= limit / 4
    }

    /// Asks the writer to close the connection with `code`; the first close asked wins.
    /// Asks for a close with `code` and `reason`; whether this was the first close asked for (a later one changes
    /// nothing).
    @discardableResult
    func close(code: UInt16, reason: String) -> Bool {
        let first = closing.withLock { current in
            guard current == nil else { return false }
            current = Close(code: code, reason: reason)
            return true
        }
        if first {
            continuation.finish()
            closeContinuation.yield()
            end()
        }
        return first
    }

    /// `reason` cut to what a close frame carries: a control frame's payload is at most 125 bytes (RFC 6455
    /// section 5.5), two of them the code. The log keeps the whole reason.
    static func closeFrameReason(_ reason: String) -> String {
        guard reason.utf8.count > 123 else { return reason }
        var cut = ""
        for character in reason {
            guard cut.utf8.count + character.utf8.count <= 120 else { break }
            cut.append(character)
        }
        return cut + "..."
    }

    /// The close asked for, if any.
    var requestedClose: Close? { closing.withLock { $0 } }

    /// Whether the queue has ended: a close was asked for, or the connection ended (its socket closed). Whatever
    /// waits for the connection gives up then.
    var hasEnded: Bool { counts.withLock { $0.ended } }

    /// Ends the queue without a close of its own (the connection ended).
    func finish() {
        continuation.finish()
        closeContinuation.finish()
        end()
    }

    /// Marks the queue ended and lets everything waiting for a drain go.
    private func end() {
        let actions = counts.withLock { counts in
            counts.ended = true
            // What the writer will not take no longer counts.
            if !counts.released {
                counts.released = true
                budget?.release(counts.bytes)
            }
            defer { counts.drained = [] }
            return counts.drained
        }
        for action in actions { action() }
    }
}
