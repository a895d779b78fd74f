import FolioCore
import Synchronization

/// What arrived for a connection since its loop last looked: frames in order, documents committed locally, timeouts,
/// and the end of the connection. The loop takes all of it at once, so frames that arrived together are handled
/// together and many commits of one document leave as one message.
///
/// Frames are bounded: once more than `frameBytes` of them wait to be taken, ``put(frame:)`` suspends until the loop
/// takes them, so a server that sends faster than the device applies makes the connection stop reading (and the
/// server close it as slow) rather than fill the device's memory. There is one reader.
final class Inbox: Sendable {
    struct Batch: Sendable {
        var frames: [[UInt8]] = []
        var appended: Set<DocumentID> = []
        var ticks = 0
        /// Whether this device's presence changed, or the wait between two sends of it ended.
        var presence = false
        var closed: String?

        var isEmpty: Bool { frames.isEmpty && appended.isEmpty && ticks == 0 && !presence && closed == nil }
    }

    private struct State {
        var batch = Batch()
        var frameBytes = 0
        var finished = false
        /// The reader, waiting for room.
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let signals: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    let frameBytes: Int

    init(frameBytes: Int) {
        self.frameBytes = frameBytes
        (signals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Adds to what is pending (anything but frames) and wakes the loop.
    func put(_ change: (inout Batch) -> Void) {
        state.withLock { change(&$0.batch) }
        continuation.yield()
    }

    /// Adds a received frame and wakes the loop; returns once the frames waiting are within the bound (or the inbox
    /// is finished). One frame is always taken, however large.
    func put(frame: [UInt8]) async {
        let full = state.withLock { state in
            state.batch.frames.append(frame)
            state.frameBytes += frame.count
            return state.frameBytes > frameBytes && !state.finished
        }
        continuation.yield()
        guard full else { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let resume = state.withLock { state in
                guard state.frameBytes > frameBytes, !state.finished else { return true }
                precondition(state.waiting == nil, "an inbox has one reader")
                state.waiting = waiter
                return false
            }
            if resume { waiter.resume() }
        }
    }

    /// Whether the reader waits for the loop to take frames.
    var isReaderWaiting: Bool { state.withLock { $0.waiting != nil } }

    /// The wake-ups: one element whenever something was added since the last one was taken (one consumer).
    var wakeUps: AsyncStream<Void> { signals }

    /// Takes everything pending, and lets a waiting reader go on.
    func take() -> Batch {
        let (batch, waiter) = state.withLock { state in
            defer {
                state.batch = Batch()
                state.frameBytes = 0
                state.waiting = nil
            }
            return (state.batch, state.waiting)
        }
        waiter?.resume()
        return batch
    }

    /// Ends the wake-ups and lets a waiting reader go on; frames put later are not waited for.
    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiter?.resume()
        continuation.finish()
    }
}
