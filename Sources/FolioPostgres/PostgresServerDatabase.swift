import Dispatch
import FolioServer
import FolioStore
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// A PostgreSQL database Folio keeps its server's data in: a bounded pool of connections, the schema brought up to
/// date when it opens (``PostgresSchema``), and a probe that says whether the database answers.
///
/// The server's storage calls are synchronous (`ServerLog`): each blocks the calling thread until the database
/// answers or ``timeout`` passes, while the work itself runs on a queue of the database's own (so that a caller on
/// one of Swift's cooperative threads cannot starve it; the server calls its logs from queues of their own).
public final class PostgresServerDatabase: Sendable {
    /// Where the database is.
    public let location: PostgresLocation
    /// The most connections open at once.
    public let connections: Int
    /// How long one call may take, connecting included, before it fails (`ServerError` `storage`).
    public let timeout: Duration
    let client: PostgresClient
    let logger: Logger
    private let runner: Task<Void, Never>
    private let loops: MultiThreadedEventLoopGroup
    /// Where the calls of `run(_:timeout:_:)` run: a queue of their own, so that a caller that blocks one of Swift's
    /// cooperative threads waiting for them never waits for a cooperative thread itself.
    private let bridge: BlockingWorkExecutor
    private let prober = Mutex<Task<Void, Never>?>(nil)
    private let listeners = Mutex<[Task<Void, Never>]>([])
    private let state = Mutex(State())
    /// Whether ``close()`` was called; read by every call, so not behind the lock of `state`.
    private let closed = Atomic<Bool>(false)
    /// Whether `state` records a failure: a call that succeeds clears it only then, so that calls from many threads do
    /// not all take the lock.
    private let failing = Atomic<Bool>(false)
    /// How many times ``unhealthyReason`` went from `nil` to a reason.
    private let outages = Atomic<UInt64>(0)

    private struct State {
        /// The latest failure to reach the database, cleared by the next call that reaches it.
        var failure: String?
        /// By channel, why a listener is not listening (its connection failed or stopped answering), cleared when it
        /// listens again.
        var deaf: [String: String] = [:]
        /// By channel, which start of listening listens now (see ``ListeningStart``).
        var listening: [String: ListeningStart] = [:]

        var isHealthy: Bool { failure == nil && deaf.isEmpty }
    }

    /// Changes `state` under its lock, counting an outage when the database was usable before and is not after.
    private func updateState(_ change: (inout State) -> Void) {
        let began = state.withLock { state in
            let wasHealthy = state.isHealthy
            change(&state)
            return wasHealthy && !state.isHealthy
        }
        if began { outages.add(1, ordering: .relaxed) }
    }

    /// How many times since the pool opened the database became unusable (``unhealthyReason`` went from `nil` to a
    /// reason): an outage short enough to end between two reads of `GET /health` still counts.
    public var outageCount: UInt64 { outages.load(ordering: .relaxed) }

    /// Which start of listening on a channel listens now: they are counted from 1, and 0 means none listens. Read
    /// without a lock, by every read of a log's copy (`LogFreshness`).
    final class ListeningStart: Sendable {
        private let current = Atomic<UInt64>(0)
        private let starts = Atomic<UInt64>(0)

        /// The start listening now, or `nil`.
        var now: UInt64? {
            let start = current.load(ordering: .acquiring)
            return start == 0 ? nil : start
        }

        func started() {
            let start = starts.wrappingAdd(1, ordering: .relaxed).newValue
            current.store(start, ordering: .releasing)
        }

        func stopped() { current.store(0, ordering: .releasing) }
    }

    /// The listening state of `channel`, made once.
    func listeningStart(of channel: String) -> ListeningStart {
        state.withLock { state in
            if let start = state.listening[channel] { return start }
            let start = ListeningStart()
            state.listening[channel] = start
            return start
        }
    }

    /// Records the latest failure to reach the database (`nil`: a call reached it).
    private func record(failure: String?) {
        if failure == nil, !failing.load(ordering: .acquiring) { return }
        updateState { state in
            state.failure = failure
            failing.store(failure != nil, ordering: .releasing)
        }
    }

    /// The default size of the pool.
    public static let defaultConnections = 10
    /// The fewest connections a pool may be given: a server's storage keeps two listening (changes and presence of
    /// other processes) and one publishing presence, and its calls need at least one more.
    public static let minimumConnections = 4
    /// The most connections a pool may be given.
    public static let maximumConnections = 1_000

    /// Connects to the database at `location` and brings its schema up to date.
    ///
    /// - Parameters:
    ///   - location: the database.
    ///   - connections: the most connections open at once, ``minimumConnections`` to ``maximumConnections``.
    ///   - timeout: how long one call may take.
    ///   - logger: where the pool logs.
    /// - Throws: `ServerError` `storage` when the database cannot be reached or its schema is from a newer Folio
    ///   (see ``PostgresSchema``), `invalidName` for a pool size out of bounds.
    public init(
        location: PostgresLocation, connections: Int = defaultConnections, timeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "folio.postgres")
    ) throws {
        guard (Self.minimumConnections...Self.maximumConnections).contains(connections) else {
            throw ServerError(
                .invalidName,
                "a PostgreSQL pool has \(Self.minimumConnections) to \(Self.maximumConnections) connections, not \(connections)"
            )
        }
        self.location = location
        self.connections = connections
        self.timeout = timeout
        self.logger = logger
        // The pool logs each failed attempt to connect at `info`: while a database is down, that is a line every
        // few milliseconds. Its warnings and errors are kept; the server's `/health` says it is down.
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .notice)
        // Connections on a thread of their own: a caller that blocks one of the server's network threads waiting for
        // the database (as the server's synchronous storage calls may) must not be waiting for that thread.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.loops = loops
        let client = PostgresClient(
            configuration: location.clientConfiguration(connections: connections, timeout: timeout),
            eventLoopGroup: loops,
            backgroundLogger: poolLogger)
        self.client = client
        // On the database's own queue too: the pool hands connections out from this task, which must run while
        // callers block cooperative threads.
        let bridge = BlockingWorkExecutor(label: "folio.postgres")
        self.bridge = bridge
        runner = Task.detached(executorPreference: bridge) { await client.run() }
        do {
            try PostgresSchema.migrate(self)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the pool's connections; later calls fail.
    public func close() {
        closed.store(true, ordering: .releasing)
        prober.withLock { $0?.cancel() }
        for listener in listeners.withLock({ $0 }) { listener.cancel() }
        runner.cancel()
        let loops = self.loops
        // Once the pool has stopped using it.
        Task.detached {
            try? await Task.sleep(for: .seconds(1))
            try? await loops.shutdownGracefully()
        }
    }

    /// Probes the database every `interval` (see ``probe()``) until ``close()``, so that ``unhealthyReason`` says
    /// within that time when the database stops answering, and when it answers again.
    public func probeEvery(_ interval: Duration) {
        let task = Task.detached(executorPreference: bridge) { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                await self.probeAsync()
                try? await Task.sleep(for: interval)
            }
        }
        prober.withLock { previous in
            previous?.cancel()
            previous = task
        }
    }

    /// Listens on `channel` on a connection of the pool (one fewer for calls) until ``close()``: `received` gets each
    /// notification's payload, and `nil` each time listening (re)starts, since notifications sent while nobody
    /// listened are lost.
    ///
    /// The listening connection is asked `SELECT 1` every `checkInterval`. One that does not answer within
    /// ``timeout`` (its server process stopped, or the network lost it without a reset, which would otherwise leave it
    /// waiting for notifications for ever) is closed, and another listens as soon as the database answers. While
    /// nothing listens, ``unhealthyReason`` says so.
    public func listen(
        on channel: String, checkEvery checkInterval: Duration = .seconds(1),
        _ received: @escaping @Sendable (String?) -> Void
    ) {
        let client = self.client
        let logger = self.logger
        let timeout = self.timeout
        // `received` runs on a queue of its own, in order: it may block (on the server's locks), and the database's
        // queue must never wait for what waits for the database.
        let deliveries = DispatchQueue(label: "folio.postgres.\(channel)")
        let start = listeningStart(of: channel)
        let task = Task.detached(executorPreference: bridge) { [weak self] in
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                try await connection.listen(on: channel) { notifications in
                                    self?.updateState { $0.deaf[channel] = nil }
                                    start.started()
                                    deliveries.async { received(nil) }
                                    for try await notification in notifications {
                                        let payload = notification.payload
                                        deliveries.async { received(payload) }
                                    }
                                }
                            }
                            group.addTask {
                                while true {
                                    try await Task.sleep(for: checkInterval)
                                    let answer = await Self.race(timeout) {
                                        _ = try await connection.query("SELECT 1", logger: logger)
                                    }
                                    guard case .failure(let error) = answer else { continue }
                                    // Closing the socket ends the listening above, whatever it waits for.
                                    try? await connection.close()
                                    throw error
                                }
                            }
                            defer { group.cancelAll() }
                            try await group.next()
                        }
                    }
                } catch {
                    if !Task.isCancelled {
                        let reason = Self.describe(error, timeout: timeout)
                        self?.updateState { $0.deaf[channel] = reason }
                        logger.warning(
                            "listening stopped", metadata: ["channel": .string(channel), "error": .string(reason)])
                    }
                }
                start.stopped()
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        listeners.withLock { $0.append(task) }
    }

    /// Sends each payload of `payloads` as a notification on `channel`, in order, until the stream ends or
    /// ``close()``; a payload that cannot be sent (the database is away) is dropped.
    public func notify(on channel: String, _ payloads: AsyncStream<String>) {
        let client = self.client
        let task = Task.detached(executorPreference: bridge) {
            for await payload in payloads {
                _ = try? await client.query("SELECT pg_notify(\(channel), \(payload))")
            }
        }
        listeners.withLock { $0.append(task) }
    }

    private func probeAsync() async {
        let client = self.client
        let answered = await Self.race(timeout) { try await client.query("SELECT 1") }
        switch answered {
        case .success: record(failure: nil)
        case .failure(let error): record(failure: Self.describe(error, timeout: timeout))
        }
    }

    /// Whether a listener of ``listen(on:checkEvery:_:)`` listens on `channel` now (as far as the process knows: one
    /// whose connection stopped answering counts until the check finds it out).
    public func isListening(on channel: String) -> Bool { listening(on: channel) != nil }

    /// Which start of listening on `channel` listens now (they are counted from 1), or `nil` while none does.
    func listening(on channel: String) -> UInt64? { listeningStart(of: channel).now }

    /// Runs `body` against `timeout` without waiting for it past the timeout: a query the database never answers
    /// must not stop its caller (postgres-nio does not stop a query it sent when its task is cancelled).
    static func race(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws -> Void
    ) async -> Result<Void, any Error> {
        await withCheckedContinuation { continuation in
            let resumer = Resumer(continuation)
            let query = Task {
                do {
                    try await body()
                    resumer.resume(.success(()))
                } catch {
                    resumer.resume(.failure(error))
                }
            }
            Task {
                try? await Task.sleep(for: timeout)
                query.cancel()
                resumer.resume(.failure(PostgresTimeout()))
            }
        }
    }

    /// Why the database cannot be used now (the latest call or probe failed to reach it, or a listener is not
    /// listening: see ``listen(on:checkEvery:_:)``), or `nil`.
    public var unhealthyReason: String? {
        state.withLock { state in
            state.failure
                ?? state.deaf.sorted { $0.key < $1.key }.first.map { "not listening on \($0.key): \($0.value)" }
        }
    }

    /// Asks the database whether it answers (`SELECT 1`), recording the answer for ``unhealthyReason``.
    ///
    /// - Returns: whether it answered.
    @discardableResult
    public func probe() -> Bool {
        (try? run("probing the database") { client in try await client.query("SELECT 1") }) != nil
    }

    /// Runs `body` with the pool and waits for it, at most ``timeout``.
    ///
    /// - Throws: `ServerError` `storage` naming `action` when the database cannot be reached, the call takes longer
    ///   than ``timeout`` or the database refuses a statement; any other error `body` throws, as it is.
    @discardableResult
    func run<T: Sendable>(
        _ action: String, timeout: Duration? = nil, _ body: @escaping @Sendable (PostgresClient) async throws -> T
    ) throws -> T {
        guard !closed.load(ordering: .acquiring) else {
            throw ServerError(.storage, "the PostgreSQL pool is closed (while \(action))")
        }
        let client = self.client
        let timeout = timeout ?? self.timeout
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Detached: a task made here would otherwise run on the caller's executor, which waits below.
        let work = Task.detached(executorPreference: bridge) {
            let result: Result<T, any Error>
            do { result = .success(try await body(client)) } catch { result = .failure(error) }
            outcome.withLock { $0 = result.mapError(Self.unwrapped) }
            done.signal()
        }
        // The wait is bounded here, whatever the call waits for (postgres-nio does not stop a query it sent when its
        // task is cancelled): past the timeout the caller goes on, and the call's task ends when the database
        // answers or the server's own timeouts (set at connection, see `PostgresLocation`) end the statement.
        if done.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds * 1000))) == .timedOut {
            work.cancel()
            let reason = Self.describe(PostgresTimeout(), timeout: timeout)
            record(failure: reason)
            throw ServerError(.storage, "PostgreSQL failed while \(action): \(reason)")
        }
        switch outcome.withLock({ $0 })! {
        case .success(let value):
            record(failure: nil)
            return value
        case .failure(let error) where error is PSQLError || error is PostgresTimeout || error is CancellationError:
            let reason = Self.describe(error, timeout: timeout)
            if Self.isUnreachable(error) { record(failure: reason) }
            throw ServerError(.storage, "PostgreSQL failed while \(action): \(reason)")
        case .failure(let error):
            // The caller's own errors (a refusal, a change that does not decode), as they are.
            throw error
        }
    }

    /// The error a transaction's closure threw, out of the transaction's wrapper; any other error as it is.
    static func unwrapped(_ error: any Error) -> any Error {
        guard let error = error as? PostgresTransactionError else { return error }
        return error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError ?? error
    }

    /// Whether `error` says the database was not reached (rather than that it refused a statement).
    static func isUnreachable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return error is PostgresTimeout }
        return [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
            .contains(error.code)
    }

    static func describe(_ error: any Error, timeout: Duration) -> String {
        if error is PostgresTimeout { return "no answer within \(timeout)" }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                return message + code
            }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The SQLSTATE of a statement the database refused, if `error` is one.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}

/// Resumes a continuation once, with whichever of several racing tasks finishes first.
private final class Resumer: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<Void, any Error>, Never>?>

    init(_ continuation: CheckedContinuation<Result<Void, any Error>, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(returning: result)
    }
}

/// A call that did not finish within the database's timeout.
struct PostgresTimeout: Error {}
