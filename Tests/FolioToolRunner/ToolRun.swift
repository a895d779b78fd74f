import FolioChildProcess
import Foundation

/// What a run of the `folio` tool printed, and how it exited.
public struct ToolRun: Sendable {
    /// The exit status.
    public var status: Int32
    /// What it wrote to standard output.
    public var output: String
    /// What it wrote to standard error.
    public var errors: String

    /// Runs the built `folio` with `arguments`, in `directory` if given, with `environment` added to this process's
    /// environment. It waits off the cooperative pool: a test that ran the tool on it would hold one of the pool's
    /// few threads for the whole run, and enough of them at once would stall every other test of the process.
    public static func folio(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) async throws -> ToolRun {
        try await ToolProcess.start(arguments, in: directory, environment: environment).finish()
    }
}

/// A `folio` process running while a test acts on it: sends it a signal, looks at the files it makes.
///
/// It is a ``FolioChildProcess/ChildProcess``: it dies with the test process, however that ends.
public final class ToolProcess: Sendable {
    private let process: ChildProcess
    private let output: OutputCollector
    private let errors: OutputCollector

    private init(process: ChildProcess, output: OutputCollector, errors: OutputCollector) {
        self.process = process
        self.output = output
        self.errors = errors
    }

    /// Starts the built `folio` with `arguments`, in `directory` if given, with `environment` added to this
    /// process's environment. Its output is read as it comes, so that it never blocks on a full pipe. With
    /// `errorsOnATerminal`, its standard error is a pseudo-terminal instead of a pipe (and its standard output
    /// still a pipe), as when it runs in a terminal with its output piped.
    public static func start(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
        errorsOnATerminal: Bool = false, executable: URL? = nil,
        onOutputLine: (@Sendable (String) -> Void)? = nil
    ) throws -> ToolProcess {
        let path = try executable ?? FolioExecutable.locate().get()
        let process = try ChildProcess.start(
            path.path, arguments: arguments,
            environment: environment.isEmpty
                ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            directory: directory?.path, standardInput: .inherit, standardOutput: .pipe,
            standardError: errorsOnATerminal ? .terminal : .pipe)
        // Once it exits (and its descendants closed them), reading the pipe ends, and reading the terminal fails.
        return ToolProcess(
            process: process, output: OutputCollector(process.standardOutput!, onLine: onOutputLine),
            errors: OutputCollector(process.standardError!))
    }

    /// The process's identifier.
    public var processIdentifier: Int32 { process.pid }

    /// Whether it has not exited yet.
    public var isRunning: Bool { process.isRunning }

    /// Sends it `signal` (`SIGTERM`, `SIGINT`…).
    public func send(_ signal: Int32) {
        process.send(signal)
    }

    /// Waits for it to exit; what it printed, and its exit status (for a process a signal killed, the signal's
    /// number: ``terminatedBySignal`` tells them apart).
    public func wait() -> ToolRun {
        let out = output.waitForText()
        let err = errors.waitForText()
        return ToolRun(status: process.wait().code, output: out, errors: err)
    }

    /// ``wait()`` off the cooperative pool (see ``offThePool(_:)``).
    public func finish() async -> ToolRun {
        (try? await offThePool { self.wait() }) ?? ToolRun(status: -1, output: "", errors: "")
    }

    /// Whether it ended by a signal it did not handle, rather than by exiting (valid after ``wait()``).
    public var terminatedBySignal: Bool {
        if case .signaled = process.ended { return true }
        return false
    }
}
