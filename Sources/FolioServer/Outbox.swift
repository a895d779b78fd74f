import Synchronization

/// What a connection's writer sends, in order: frames queued by the library, then, once asked, a close.
///
/// The queue is bounded: a client that does not read falls behind by at most ``limit`` frames, then its connection is
/// closed (it reconnects and catches up with a session), so one slow client never holds the server's memory or the
/// other connections back.
final class Outbox: Sendable {
    /// A close the writer sends instead of what is still queued.
    struct Close: Sendable {
        /// The WebSocket close code (RFC 6455 section 7.4).
        var code: UInt16
        /// The reason, sent with the close frame and logged.
        var reason: String
    }

    let frames: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let closing = Mutex<Close?>(nil)
    private let queuedBytes = Atomic<Int>(0)
    let limit: Int
    let byteLimit: Int

    init(limit: Int = 4096, byteLimit: Int = 4 << 20) {
        self.limit = limit
        self.byteLimit = byteLimit
        (frames, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingOldest(limit))
    }

    /// Queues a frame; when the queue is full (in frames or bytes), the connection is closed as too slow.
    func send(_ frame: [UInt8]) {
        let queued = queuedBytes.add(frame.count, ordering: .relaxed).newValue
        if queued > byteLimit, queued > frame.count {
            close(code: 1008, reason: "the client read too slowly: more than \(byteLimit) bytes were waiting")
            return
        }
        if case .dropped = continuation.yield(frame) {
            close(code: 1008, reason: "the client read too slowly: more than \(limit) frames were waiting")
        }
    }

    /// The writer took `frame` off the queue.
    func taken(_ frame: [UInt8]) {
        queuedBytes.subtract(frame.count, ordering: .relaxed)
    }

    /// Asks the writer to close the connection with `code`; the first close asked wins.
    func close(code: UInt16, reason: String) {
        let first = closing.withLock { current in
            guard current == nil else { return false }
            current = Close(code: code, reason: reason)
            return true
        }
        if first { continuation.finish() }
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

    /// Ends the queue without a close of its own (the connection ended).
    func finish() { continuation.finish() }
}
