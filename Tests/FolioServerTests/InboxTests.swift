import Synchronization
import Testing

@testable import FolioClient

/// A live connection's inbox holds a bounded number of received bytes: past the bound, the reader waits for the loop.
@Suite(.timeLimit(.minutes(1))) struct InboxTests {
    /// Waits until the inbox's reader is parked (the reader task may start late on a loaded machine).
    private func untilReaderWaits(_ inbox: Inbox) async throws {
        while !inbox.isReaderWaiting { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func aReaderPastTheBoundWaitsUntilTheLoopTakes() async throws {
        let inbox = Inbox(frameBytes: 1_000)
        await inbox.put(frame: Array(repeating: 1, count: 600))
        #expect(!inbox.isReaderWaiting, "under the bound a frame is taken without waiting")
        let returned = Mutex(false)
        let reader = Task {
            await inbox.put(frame: Array(repeating: 2, count: 600))
            returned.withLock { $0 = true }
        }
        // The second frame is held (both frames wait), but its reader does not go on until they are taken.
        try await untilReaderWaits(inbox)
        #expect(!returned.withLock { $0 })
        let batch = inbox.take()
        #expect(batch.frames.map(\.count) == [600, 600])
        await reader.value
        #expect(returned.withLock { $0 })
        #expect(!inbox.isReaderWaiting)
    }

    @Test func finishingLetsAWaitingReaderGo() async throws {
        let inbox = Inbox(frameBytes: 10)
        let reader = Task { await inbox.put(frame: Array(repeating: 0, count: 11)) }
        try await untilReaderWaits(inbox)
        inbox.finish()
        await reader.value
        // Once finished, nothing waits.
        await inbox.put(frame: Array(repeating: 0, count: 100))
        #expect(!inbox.isReaderWaiting)
    }
}
