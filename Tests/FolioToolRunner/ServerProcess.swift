import Foundation
import Synchronization

/// A `folio serve` process on loopback, started on a free port, for tests that sync with a real server.
public final class ServerProcess: Sendable {
    /// The port it listens on.
    public let port: Int
    /// Its data directory.
    public let data: URL
    /// The PostgreSQL database it keeps its data in (`--postgres`), if any.
    public let postgres: String?
    private let process: ToolProcess

    /// The server's base address, `http://127.0.0.1:PORT`.
    public var base: String { "http://127.0.0.1:\(port)" }

    /// A library's address on it, `ws://127.0.0.1:PORT/v1/libraries/NAME`.
    public func libraryURL(_ name: String) -> URL { URL(string: "ws://127.0.0.1:\(port)/v1/libraries/\(name)")! }

    /// Starts a server off the cooperative pool (see ``offThePool(_:)``).
    public static func start(data: URL, port: Int = 0, arguments: [String] = []) async throws -> ServerProcess {
        try await offThePool { try ServerProcess(data: data, port: port, arguments: arguments) }
    }

    /// Issues a token off the cooperative pool.
    public func token(for library: String, account: String = "default") async throws -> String {
        let data = data
        let postgres = postgres
        return try await offThePool { try Self.token(for: library, account: account, data: data, postgres: postgres) }
    }

    /// Kills it and waits, off the cooperative pool.
    public func stop() async {
        _ = try? await offThePool { self.kill() }
    }

    /// Starts `folio serve --port PORT --data DATA` (plus `arguments`; port 0 picks a free one) and waits until it
    /// says where it listens.
    public init(data: URL, port: Int = 0, arguments: [String] = [], timeout: Duration = .seconds(60)) throws {
        let lines = LineReader()
        process = try ToolProcess.start(
            ["serve", "--port", "\(port)", "--data", data.path] + arguments, onOutputLine: lines.append)
        self.data = data
        postgres = arguments.firstIndex(of: "--postgres").flatMap {
            arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil
        }
        guard let line = lines.first(containing: "listening on", within: timeout),
            let portText = line.split(separator: ":").last,
            let port = Int(portText.trimmingCharacters(in: .whitespaces))
        else {
            process.send(SIGKILL)
            let run = process.wait()
            throw ServerProcessError(message: "folio serve did not start: \(run.errors)")
        }
        self.port = port
    }

    /// Issues a token for `library` in the data directory `data` (in the PostgreSQL database `postgres`, if given).
    public static func token(
        for library: String, account: String = "default", data: URL, postgres: String? = nil
    ) throws -> String {
        let run = try ToolProcess.start(
            ["serve", "token", "create", "--library", library, "--account", account, "--data", data.path]
                + (postgres.map { ["--postgres", $0] } ?? [])
        ).wait()
        guard run.status == 0 else { throw ServerProcessError(message: "token create failed: \(run.errors)") }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Sends `signal` to the server.
    public func send(_ signal: Int32) { process.send(signal) }

    /// The process's identifier.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Waits for it to exit.
    public func wait() -> ToolRun { process.wait() }

    /// Kills it (SIGKILL) if it still runs, and waits.
    public func kill() {
        if process.isRunning { process.send(SIGKILL) }
        _ = process.wait()
    }
}

/// Why a server process could not be used.
public struct ServerProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}

/// Lines a process printed, as they come.
final class LineReader: Sendable {
    private let lines = Mutex<[String]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
        arrived.signal()
    }

    /// The first line containing `text`, waiting up to `timeout` for it.
    func first(containing text: String, within timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = lines.withLock({ $0.first { $0.contains(text) } }) { return line }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            _ = arrived.wait(timeout: .now() + .milliseconds(Int(left.components.seconds * 1000 + 1)))
        }
    }
}

/// Runs `body`, which blocks (waits for a process, reads its pipes), on a thread of its own rather than on Swift's
/// cooperative pool, which has one thread per core: an async test that blocks there stalls every other test's
/// tasks, the devices and clients under test among them.
///
/// Not on Dispatch's global queues either: their worker threads are bounded too, and SwiftNIO resolves every address
/// it connects to (even `127.0.0.1`) on a dispatch queue, so dozens of tests blocked there at once make a client's
/// connect time out before the address is resolved.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        // Processes started here are forked on FolioChildProcess's own thread, so this thread may exit without
        // killing them.
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
