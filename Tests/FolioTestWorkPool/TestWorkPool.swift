import Foundation
import Testing

/// A few threads of their own for the tests that compute or block, so that the cooperative pool stays free for the
/// tests that wait on time.
///
/// Swift Testing starts every test case at once and runs each on the cooperative pool, which has one thread per core.
/// A synchronous test holds its thread until it ends, and a test that blocks (on a child process, a semaphore, a
/// sleep) holds it while it waits. With enough of them at once, the pool runs nothing else: a test that waits for a
/// server's answer within a deadline, or for a timer, is not resumed until they end, and fails although nothing it
/// tests is slow. The suites marked ``Testing/Trait/workPool`` run their tests here instead, as many at once as there
/// are threads, first come first served.
public final class TestWorkPool: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `next` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var stopping = false

    /// The pool the ``Testing/Trait/workPool`` trait runs tests on: one thread per core, and at least two, yielding
    /// the cores to everything else.
    public static let shared = TestWorkPool(
        threads: max(2, ProcessInfo.processInfo.activeProcessorCount), yielding: true)

    /// A pool of `threads` threads, which run until ``stop()``; with `yielding`, at a lower priority than the
    /// process's other threads and processes (nice 10), so that a test computing here never delays one that waits on
    /// time: it takes the cores they leave.
    init(threads: Int, yielding: Bool) {
        for _ in 0..<threads {
            let thread = Thread {
                Thread.current.threadDictionary[Self.marker] = true
                #if os(Linux)
                    // On Linux the nice value is the thread's: PRIO_PROCESS with 0 sets the calling thread's alone.
                    if yielding { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
                #endif
                self.work()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private static let marker = "FolioTestWorkPool"

    /// Whether the calling code runs on a thread of a work pool.
    public static var isCurrent: Bool {
        Thread.current.threadDictionary[marker] != nil
    }

    /// Queues `job` behind the jobs queued before it; the first thread free runs it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the threads end once no job is left.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Runs jobs in the order they came, until stopped with none left.
    private func work() {
        while true {
            condition.lock()
            while next == jobs.count {
                if stopping {
                    condition.unlock()
                    return
                }
                condition.wait()
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count || next >= 4_096 {
                jobs.removeFirst(next)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs each test of the suite or function it marks on ``TestWorkPool/shared`` (or on a thread of its own) rather
/// than on the cooperative pool.
public struct WorkPoolTrait: SuiteTrait, TestTrait, TestScoping {
    /// Whether each test gets a thread of its own instead of queueing for the shared pool's.
    let ownThread: Bool

    /// On a suite, the trait applies to each of its tests.
    public var isRecursive: Bool { true }

    /// Each test case runs in the scope; a suite as a whole needs none.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Runs the test case with the work pool as its task's preferred executor: the test's own code (and any
    /// nonisolated code it calls) runs on the pool's threads.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard ownThread else {
            try await withTaskExecutorPreference(TestWorkPool.shared) { try await function() }
            return
        }
        let pool = TestWorkPool(threads: 1, yielding: false)
        defer { pool.stop() }
        try await withTaskExecutorPreference(pool) { try await function() }
    }
}

extension Trait where Self == WorkPoolTrait {
    /// Runs the tests on ``TestWorkPool/shared``: for tests that compute or block for long, which on the cooperative
    /// pool would hold up the tests that wait on time.
    public static var workPool: Self { WorkPoolTrait(ownThread: false) }

    /// Runs each test on a thread of its own, at once: for tests that block and carry a time limit, which waiting
    /// for the shared pool's threads would use up.
    public static var ownThread: Self { WorkPoolTrait(ownThread: true) }
}
