import Dispatch

/// A serial executor that runs its jobs on a dispatch queue of its own, off Swift's cooperative thread pool.
///
/// SQLite transactions and `fsync` block the thread they run on for milliseconds. On the cooperative pool, which has
/// one thread per core, a few documents saving at once would stall every other task of the program. An actor that
/// does such work (FolioDocuments' `Document`) runs on one of these instead, and async work that calls the store
/// directly (a library's sync) prefers one as its task executor. Its queue's thread may block without starving the
/// pool.
public final class BlockingWorkExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // @unchecked: the only state is an immutable dispatch queue, which is thread-safe.
    private let queue: DispatchQueue

    /// Creates an executor with its own serial queue, named `label` in debuggers and crash logs.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `job` on the queue, after the jobs enqueued before it.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
    }

    /// This executor, as an actor's serial executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// This executor, as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
