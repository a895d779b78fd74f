import FolioTestWorkPool
import Foundation
import Testing

/// The `.workPool` trait the suites that compute or block carry: their tests run on the work pool's threads, not on
/// the cooperative pool.
@Suite(.workPool) struct TestWorkPoolTests {
    @Test func aSynchronousTestRunsOnAThreadOfTheWorkPool() {
        #expect(TestWorkPool.isCurrent)
        #if os(Linux)
            // At nice 10, below the threads that wait on time.
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 10)
        #endif
    }

    @Test func anAsynchronousTestResumesThereAfterItsAwaits() async throws {
        try await Task.sleep(for: .milliseconds(1))
        #expect(TestWorkPool.isCurrent)
    }

    @Test(.ownThread) func aTestOnAThreadOfItsOwnRunsThere() async throws {
        try await Task.sleep(for: .milliseconds(1))
        #expect(TestWorkPool.isCurrent)
    }
}
