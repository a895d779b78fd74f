import CChildProcess
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process that dies with the process that started it.
///
/// Foundation's `Process.run()` on Linux over-reads a `dirent` while it scans `/proc/self/fd`
/// (swift-corelibs-foundation#5472) and crashed the test suite; the children it had started (`folio serve`
/// processes) then ran on with no parent. `ChildProcess` starts children on one dedicated thread of this process
/// that never exits, sharing its memory until they execute (so a start does not copy a large process), and the
/// child asks the kernel for SIGKILL when that thread (so this process) ends, whatever ends it:
/// an exit, SIGKILL, a crash in any thread.
///
/// ```swift
/// let child = try ChildProcess.start("/usr/bin/env", arguments: ["gzip", "-dc", path])
/// let output = OutputCollector(child.standardOutput!)
/// let termination = child.wait()
/// ```
///
/// A child outlives only what its own children do: a grandchild dies with its parent only if that parent started
/// it the same way.
public final class ChildProcess: Sendable {
    /// What a standard descriptor of the child is.
    public enum Stream: Sendable {
        /// This process's own descriptor.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe; the parent's end is ``ChildProcess/standardInput``, ``ChildProcess/standardOutput`` or
        /// ``ChildProcess/standardError``.
        case pipe
        /// A pseudo-terminal (`openpty`); the parent's end (the controller) is given as for a pipe. Reading it ends
        /// with an error (EIO) rather than at an end of file once the child and its descendants closed it.
        case terminal
        /// This descriptor, which the caller keeps and closes.
        case descriptor(Int32)
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal it did not handle ended it.
        case signaled(Int32)

        /// Its exit status, or the signal's number.
        public var code: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }

        /// Whether it exited with status 0.
        public var succeeded: Bool { self == .exited(0) }

        /// "exit 1", "signal 9".
        public var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's process identifier.
    public let pid: pid_t
    /// ``pid``, by the name Foundation's `Process` gives it.
    public var processIdentifier: pid_t { pid }
    /// The parent's end of the child's standard input when it is a pipe or a terminal; the caller closes it.
    public let standardInput: Int32?
    /// The parent's end of the child's standard output when it is a pipe or a terminal; the caller reads and closes
    /// it (see ``OutputCollector``).
    public let standardOutput: Int32?
    /// The parent's end of the child's standard error when it is a pipe or a terminal; the caller reads and closes
    /// it (see ``OutputCollector``).
    public let standardError: Int32?
    /// How it ended, once it was waited for.
    private let termination = Mutex<Termination?>(nil)

    private init(pid: pid_t, standardInput: Int32?, standardOutput: Int32?, standardError: Int32?) {
        self.pid = pid
        self.standardInput = standardInput
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// A child nobody waited for is waited for once it ends (on a thread of its own), so that it does not stay a
    /// zombie for the rest of this process's life, as Foundation's `Process` reaps every child.
    deinit {
        guard termination.withLock({ $0 == nil }) else { return }
        let pid = pid
        Thread.detachNewThread { _ = Self.reap(pid, blocking: true) }
    }

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - executable: a path, or a name looked for in `PATH` (this process's).
    ///   - arguments: the arguments after the program's name.
    ///   - environment: the child's whole environment; `nil`: this process's.
    ///   - directory: where it starts; `nil`: this process's working directory.
    ///   - standardInput: its standard input; this process's by default.
    ///   - standardOutput: its standard output; a pipe by default.
    ///   - standardError: its standard error; a pipe by default.
    ///   - newProcessGroup: whether it starts a process group of its own (so that a terminal's signals do not
    ///     reach it, and a signal can be sent to it and its descendants at once).
    /// - Throws: ``ChildProcessError`` when it could not be started (no such executable, no such directory…).
    public static func start(
        _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, standardInput: Stream = .inherit, standardOutput: Stream = .pipe,
        standardError: Stream = .pipe, newProcessGroup: Bool = false
    ) throws(ChildProcessError) -> ChildProcess {
        let path = try resolve(executable)
        var opened = Descriptors()
        defer { opened.closeChildEnds() }
        do {
            let input = try opened.make(standardInput, childReads: true)
            let output = try opened.make(standardOutput, childReads: false)
            let errors = try opened.make(standardError, childReads: false)

            let pid = try withCStrings([executable] + arguments) { argv in
                try withOptionalCStrings(environment.map { $0.map { "\($0.key)=\($0.value)" } }) { envp in
                    try path.withCString { pathPointer in
                        try withOptionalCString(directory) { directoryPointer in
                            var request = folio_child_spawn_request(
                                path: pathPointer, argv: argv, envp: envp, directory: directoryPointer,
                                stdin_fd: input.child, stdout_fd: output.child, stderr_fd: errors.child,
                                new_process_group: newProcessGroup ? 1 : 0)
                            var errorNumber: Int32 = 0
                            var step: Int32 = 0
                            let pid = folio_child_spawn(&request, &errorNumber, &step)
                            guard pid > 0 else {
                                throw ChildProcessError(
                                    executable: executable, step: Int(step), errorNumber: errorNumber)
                            }
                            return pid
                        }
                    }
                }
            }
            opened.keepParentEnds()
            return ChildProcess(
                pid: pid, standardInput: input.parent, standardOutput: output.parent, standardError: errors.parent)
        } catch let error as ChildProcessError {
            opened.closeParentEnds()
            throw error
        } catch {
            opened.closeParentEnds()
            throw ChildProcessError(executable: executable, step: 0, errorNumber: EIO)
        }
    }

    /// Runs `executable` to its end and returns what it wrote to its standard output and error (read as they come,
    /// so that a full pipe never blocks it) and how it ended.
    ///
    /// The parameters are those of ``start(_:arguments:environment:directory:standardInput:standardOutput:standardError:newProcessGroup:)``,
    /// with standard input `/dev/null` by default.
    public static func run(
        _ executable: String, arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, standardInput: Stream = .null, standardError: Stream = .pipe
    ) throws(ChildProcessError) -> Outcome {
        let child = try start(
            executable, arguments: arguments, environment: environment, directory: directory,
            standardInput: standardInput, standardOutput: .pipe, standardError: standardError)
        let output = child.standardOutput.map { OutputCollector($0) }
        let errors = child.standardError.map { OutputCollector($0) }
        let outputData = output?.wait() ?? Data()
        let errorData = errors?.wait() ?? Data()
        return Outcome(termination: child.wait(), output: outputData, errors: errorData)
    }

    /// What a child run by ``run(_:arguments:environment:directory:standardInput:standardError:)`` wrote, and how
    /// it ended.
    public struct Outcome: Sendable {
        /// How it ended.
        public var termination: Termination
        /// What it wrote to its standard output.
        public var output: Data
        /// What it wrote to its standard error (empty unless it was a pipe).
        public var errors: Data

        /// Its exit status, or the number of the signal that ended it.
        public var status: Int32 { termination.code }
        /// Its standard output as UTF-8 text.
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        /// Its standard error as UTF-8 text.
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Sends it `signal`, unless it was already waited for (its identifier may then be another process's).
    public func send(_ signal: Int32) {
        termination.withLock { ended in
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// Whether it has not ended yet (it is waited for if it has).
    public var isRunning: Bool {
        termination.withLock { ended in
            if ended == nil { ended = Self.reap(pid, blocking: false) }
            return ended == nil
        }
    }

    /// How it ended, if it was waited for.
    public var ended: Termination? { termination.withLock { $0 } }

    /// Waits until it ends (blocking the calling thread), from any thread and as often as asked.
    public func wait() -> Termination {
        // Wait without reaping (WNOWAIT), so that no lock is held while blocked and ``send(_:)`` never signals a
        // reaped identifier; then reap under the lock.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno != EINTR { break }  // ECHILD: another thread reaped it
        }
        while true {
            let ended = termination.withLock { ended -> Termination? in
                if ended == nil { ended = Self.reap(pid, blocking: false) }
                return ended
            }
            if let ended { return ended }
            usleep(1_000)
        }
    }

    /// `waitpid` for `pid`: how it ended, or `nil` if it runs. A child reaped elsewhere (by a `waitpid(-1, …)` of
    /// someone else's, or because SIGCHLD is ignored) counts as `.exited(-1)`, so that nobody waits forever.
    private static func reap(_ pid: pid_t, blocking: Bool) -> Termination? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { break }
            if result < 0 && errno == EINTR { continue }
            if result < 0 && errno == ECHILD { return .exited(-1) }
            return nil
        }
        // WIFEXITED / WTERMSIG, which Swift does not import as functions.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// The path of `executable`: itself when it holds a slash, otherwise the first match in `PATH`.
    private static func resolve(_ executable: String) throws(ChildProcessError) -> String {
        if executable.contains("/") { return executable }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = "\(directory)/\(executable)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw ChildProcessError(executable: executable, step: Int(FOLIO_CHILD_STEP_EXEC.rawValue), errorNumber: ENOENT)
    }
}

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// The executable.
    public var executable: String
    /// The step that failed (a `folio_child_spawn_step`).
    public var step: Int
    /// The `errno` of the failure.
    public var errorNumber: Int32

    /// "cannot start gzip: executing it: No such file or directory".
    public var description: String {
        let steps = [
            "starting it", "making a pipe", "forking", "asking for the parent's death signal",
            "making a process group", "setting its standard descriptors", "changing directory", "executing it",
            "starting the spawning thread",
        ]
        let what = steps.indices.contains(step) ? steps[step] : "step \(step)"
        return "cannot start \(executable): \(what): \(String(cString: strerror(errorNumber)))"
    }
}

/// The descriptors made for one start: the child's ends are closed once it started, the parent's on failure.
private struct Descriptors {
    private var childEnds: [Int32] = []
    private var parentEnds: [Int32] = []

    /// The descriptor the child gets for `stream` (-1: this process's) and the parent's end, if any.
    mutating func make(_ stream: ChildProcess.Stream, childReads: Bool) throws(ChildProcessError) -> (
        child: Int32, parent: Int32?
    ) {
        switch stream {
        case .inherit:
            return (-1, nil)
        case .descriptor(let descriptor):
            return (descriptor, nil)
        case .null:
            let descriptor = open("/dev/null", (childReads ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
            guard descriptor >= 0 else { throw failure(errno) }
            childEnds.append(descriptor)
            return (descriptor, nil)
        case .pipe:
            var ends: [Int32] = [-1, -1]
            guard folio_child_pipe(&ends) == 0 else { throw failure(errno) }
            let (read, write) = (Self.aboveStandard(ends[0]), Self.aboveStandard(ends[1]))
            childEnds.append(childReads ? read : write)
            parentEnds.append(childReads ? write : read)
            return childReads ? (read, write) : (write, read)
        case .terminal:
            var controller: Int32 = -1
            var terminal: Int32 = -1
            guard openpty(&controller, &terminal, nil, nil, nil) == 0 else { throw failure(errno) }
            controller = Self.aboveStandard(controller)
            terminal = Self.aboveStandard(terminal)
            _ = fcntl(controller, F_SETFD, FD_CLOEXEC)
            _ = fcntl(terminal, F_SETFD, FD_CLOEXEC)
            childEnds.append(terminal)
            parentEnds.append(controller)
            return (terminal, controller)
        }
    }

    private func failure(_ errorNumber: Int32) -> ChildProcessError {
        ChildProcessError(executable: "", step: Int(FOLIO_CHILD_STEP_PIPE.rawValue), errorNumber: errorNumber)
    }

    /// `descriptor`, moved above 0, 1 and 2 (which are free only when this process closed them) and close-on-exec.
    private static func aboveStandard(_ descriptor: Int32) -> Int32 {
        guard descriptor < 3 else { return descriptor }
        let moved = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        guard moved >= 0 else { return descriptor }
        close(descriptor)
        return moved
    }

    mutating func closeChildEnds() {
        for descriptor in childEnds { close(descriptor) }
        childEnds = []
    }

    mutating func closeParentEnds() {
        for descriptor in parentEnds { close(descriptor) }
        parentEnds = []
    }

    mutating func keepParentEnds() { parentEnds = [] }
}

private func withCStrings<T>(
    _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws -> T
) rethrows -> T {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return try pointers.withUnsafeBufferPointer { try body($0.baseAddress!) }
}

private func withOptionalCStrings<T>(
    _ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) throws -> T
) rethrows -> T {
    guard let strings else { return try body(nil) }
    return try withCStrings(strings) { try body($0) }
}

private func withOptionalCString<T>(_ string: String?, _ body: (UnsafePointer<CChar>?) throws -> T) rethrows -> T {
    guard let string else { return try body(nil) }
    return try string.withCString { try body($0) }
}
