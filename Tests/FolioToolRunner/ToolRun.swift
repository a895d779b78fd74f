import Foundation
import Synchronization

/// What a run of the `folio` tool printed, and how it exited.
public struct ToolRun: Sendable {
    /// The exit status.
    public var status: Int32
    /// What it wrote to standard output.
    public var output: String
    /// What it wrote to standard error.
    public var errors: String

    /// Runs the built `folio` with `arguments`, in `directory` if given, with `environment` added to this process's
    /// environment.
    public static func folio(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> ToolRun {
        try ToolProcess.start(arguments, in: directory, environment: environment).wait()
    }
}

// @unchecked: `Process` is not marked Sendable; a test only signals it and waits for it, which `Process` allows from
// any thread, and the captured output is behind its own lock.
/// A `folio` process running while a test acts on it: sends it a signal, looks at the files it makes.
public final class ToolProcess: @unchecked Sendable {
    private let process: Process
    private let output: Captured
    private let errors: Captured

    private init(process: Process, output: Captured, errors: Captured) {
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
        let process = Process()
        process.executableURL = try executable ?? FolioExecutable.locate().get()
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        process.standardOutput = output
        let errors: Captured
        if errorsOnATerminal {
            var controller: Int32 = -1
            var terminal: Int32 = -1
            guard openpty(&controller, &terminal, nil, nil, nil) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
            do {
                try spawning.withLock { _ in try process.run() }
            } catch {
                close(controller)
                close(terminal)
                throw error
            }
            // The child holds the terminal now; once it exits, reading the controller ends.
            close(terminal)
            errors = Captured(controller)
        } else {
            let pipe = Pipe()
            process.standardError = pipe
            try spawning.withLock { _ in try process.run() }
            errors = Captured(pipe.fileHandleForReading.fileDescriptor, keeping: pipe)
        }
        return ToolProcess(
            process: process,
            output: Captured(output.fileHandleForReading.fileDescriptor, keeping: output, onLine: onOutputLine),
            errors: errors)
    }

    /// The process's identifier.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether it has not exited yet.
    public var isRunning: Bool { process.isRunning }

    /// Sends it `signal` (`SIGTERM`, `SIGINT`…).
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for it to exit; what it printed, and its exit status (for a process a signal killed, the signal's
    /// number: ``terminatedBySignal`` tells them apart).
    public func wait() -> ToolRun {
        let out = output.wait()
        let err = errors.wait()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, output: out, errors: err)
    }

    /// ``wait()`` off the cooperative pool (see ``offThePool(_:)``).
    public func finish() async -> ToolRun {
        (try? await offThePool { self.wait() }) ?? ToolRun(status: -1, output: "", errors: "")
    }

    /// Whether it ended by a signal it did not handle, rather than by exiting (valid after ``wait()``).
    public var terminatedBySignal: Bool { process.terminationReason == .uncaughtSignal }
}

/// Held while a process starts: Foundation's `Process.run()` on Linux reads shared process state (the environment,
/// descriptors) without a lock, and two threads starting processes at once crash in it.
private let spawning = Mutex(())

/// One pipe or terminal read to its end on a thread of its own.
private final class Captured: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    /// Reads `descriptor` until its end (or, for a terminal whose other side is closed, an error), then closes
    /// it unless `pipe`, which closes it, is given.
    init(_ descriptor: Int32, keeping pipe: Pipe? = nil, onLine: (@Sendable (String) -> Void)? = nil) {
        Thread.detachNewThread { [self] in
            var collected = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            var lineStart = 0
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                collected.append(contentsOf: buffer[..<count])
                if let onLine {
                    while let newline = collected[lineStart...].firstIndex(of: 10) {
                        onLine(String(decoding: collected[lineStart..<newline], as: UTF8.self))
                        lineStart = newline + 1
                    }
                }
            }
            if pipe == nil { close(descriptor) }
            withExtendedLifetime(pipe) {}
            data.withLock { $0 = collected }
            done.signal()
        }
    }

    /// What was read, once the pipe is closed (the process exited, or closed it).
    func wait() -> String {
        done.wait()
        done.signal()
        return String(decoding: data.withLock { $0 }, as: UTF8.self)
    }
}
