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

    /// Marks each executor's queue, so that code can tell which one it runs on.
    private static let marker = DispatchSpecificKey<ObjectIdentifier>()

    /// Creates an executor with its own serial queue, named `label` in debuggers and crash logs.
    public init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.marker, value: ObjectIdentifier(self))
    }

    /// Whether the calling code runs on this executor (on its queue).
    public var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.marker) == ObjectIdentifier(self)
    }

    /// Stops the program unless the calling code runs on this executor: what `assumeIsolated` and
    /// `preconditionIsolated` of an actor running here check. (Code a store runs inside its transactions runs on the
    /// database's own queue, not this one.)
    public func checkIsolated() {
        precondition(isCurrent, "not on the executor's queue")
    }

    /// Whether the calling code runs on this executor, for isolation checks that must not stop the program.
    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
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
