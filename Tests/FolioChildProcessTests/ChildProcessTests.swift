import FolioChildProcess
import FolioTestWorkPool
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Child processes started through `ChildProcess` die with the process that started them, and starting them does
/// not crash however many threads start processes or open and close descriptors at the same time (Foundation's
/// `Process.run()` did both: it crashed in its scan of /proc/self/fd, and left its children running).
@Suite(.ownThread) struct ChildProcessTests {
    /// The helper executable built next to the test bundle.
    static func helper() throws -> String {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [runner.deletingLastPathComponent().appendingPathComponent("FolioChildProcessHelper").path]
        let bundle = Bundle.main.bundleURL.resolvingSymlinksInPath()
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("FolioChildProcessHelper").path)
        var packageRoot = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { packageRoot.deleteLastPathComponent() }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/FolioChildProcessHelper").path)
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HelperMissing(candidates: candidates)
        }
        return found
    }

    struct HelperMissing: Error, CustomStringConvertible {
        var candidates: [String]
        var description: String { "FolioChildProcessHelper not found at \(candidates.joined(separator: ", "))" }
    }

    /// Whether `pid` no longer runs: no such process, or a zombie that nobody reaped (an orphan's new parent may
    /// be slow to, or never reap it).
    static func isGone(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0 && errno == ESRCH { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].dropFirst().first
        return state == "Z" || state == "X"
    }

    /// Waits up to `timeout` for `pid` to be gone.
    static func waitUntilGone(_ pid: pid_t, within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if isGone(pid) { return true }
            usleep(20_000)
        }
        return isGone(pid)
    }

    /// The first line `collector` reads, waiting up to `timeout`.
    static func firstLine(of collector: OutputCollector, within timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = String(decoding: collector.data, as: UTF8.self)
            if let newline = text.firstIndex(of: "\n") { return String(text[..<newline]) }
            if collector.ended { return nil }
            usleep(10_000)
        }
        return nil
    }

    /// Starts the helper in `mode`, and returns it with the grandchild's identifier it printed.
    static func startHelper(_ mode: String) throws -> (helper: ChildProcess, grandchild: pid_t) {
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let helper = try ChildProcess.start(
            try helper(), arguments: [mode], environment: environment, standardInput: .null,
            standardError: .inherit)
        let output = OutputCollector(helper.standardOutput!)
        guard let line = firstLine(of: output, within: .seconds(20)), let grandchild = pid_t(line) else {
            helper.send(SIGKILL)
            _ = helper.wait()
            throw HelperMissing(candidates: ["the helper printed no process identifier"])
        }
        return (helper, grandchild)
    }

    @Test(.timeLimit(.minutes(1)))
    func aGrandchildDiesWhenItsParentIsKilled() throws {
        let (helper, grandchild) = try Self.startHelper("wait")
        #expect(!Self.isGone(grandchild), "the grandchild runs while its parent does")
        helper.send(SIGKILL)
        #expect(helper.wait() == .signaled(SIGKILL))
        let gone = Self.waitUntilGone(grandchild, within: .seconds(5))
        if !gone { kill(grandchild, SIGKILL) }
        #expect(gone, "the grandchild \(grandchild) still runs 5 s after its parent was killed")
    }

    @Test(.timeLimit(.minutes(1)))
    func aGrandchildDiesWhenItsParentCrashesInAnotherThread() throws {
        let (helper, grandchild) = try Self.startHelper("crash-in-thread")
        #expect(helper.wait() == .signaled(SIGSEGV))
        let gone = Self.waitUntilGone(grandchild, within: .seconds(5))
        if !gone { kill(grandchild, SIGKILL) }
        #expect(gone, "the grandchild \(grandchild) still runs 5 s after its parent crashed")
    }

    /// The control for the two tests above: a grandchild that a shell starts (not through `ChildProcess`) survives
    /// its parent's SIGKILL, so that "gone" there means something.
    @Test(.timeLimit(.minutes(1)))
    func aGrandchildStartedOtherwiseOutlivesItsParent() throws {
        let shell = try ChildProcess.start(
            "/bin/sh", arguments: ["-c", "sleep 600 & echo $!; wait"], standardInput: .null, standardError: .null)
        let output = OutputCollector(shell.standardOutput!)
        let line = try #require(Self.firstLine(of: output, within: .seconds(20)))
        let grandchild = try #require(pid_t(line))
        shell.send(SIGKILL)
        _ = shell.wait()
        let gone = Self.waitUntilGone(grandchild, within: .milliseconds(500))
        kill(grandchild, SIGKILL)
        #expect(!gone, "sleep was expected to outlive the shell that started it")
    }

    /// PR_SET_PDEATHSIG fires when the thread that forked ends: a child started from a thread that then exits
    /// must go on running (the forks happen on one thread that never exits).
    @Test(.timeLimit(.minutes(1)))
    func aChildOutlivesTheThreadThatStartedIt() throws {
        let started = Mutex<Result<ChildProcess, ChildProcessError>?>(nil)
        let thread = Thread {
            started.withLock {
                $0 = Result { () throws(ChildProcessError) in
                    try ChildProcess.start(
                        "sleep", arguments: ["600"], standardInput: .null, standardOutput: .null, standardError: .null)
                }
            }
        }
        thread.start()
        let deadline = ContinuousClock.now + .seconds(20)
        while started.withLock({ $0 == nil }) && ContinuousClock.now < deadline { usleep(10_000) }
        let child = try #require(started.withLock { $0 }).get()
        // The thread has returned; give an early death signal time to arrive.
        usleep(500_000)
        #expect(child.isRunning)
        child.send(SIGKILL)
        #expect(child.wait() == .signaled(SIGKILL))
    }

    /// Many short processes started from several threads at once while other threads open and close descriptors:
    /// what crashed Foundation's `Process.run()` (swift-corelibs-foundation#5472).
    ///
    /// The descriptor threads pause a little between rounds: spinning, three of them would take both cores of a CI
    /// machine from the rest of the suite, and the starts (each a fork of the whole test process) would take minutes.
    @Test(.timeLimit(.minutes(3)))
    func manyStartsFromManyThreadsWhileDescriptorsComeAndGo() throws {
        let starters = 6
        let runsEach = 25
        let stop = Atomic(false)
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                var ends: [Int32] = [-1, -1]
                while !stop.load(ordering: .relaxed) {
                    let descriptor = open("/dev/null", O_RDONLY)
                    if pipe(&ends) == 0 {
                        close(ends[0])
                        close(ends[1])
                    }
                    if descriptor >= 0 { close(descriptor) }
                    usleep(100)
                }
                group.leave()
            }
        }
        let starting = DispatchGroup()
        for starter in 0..<starters {
            starting.enter()
            Thread.detachNewThread {
                for run in 0..<runsEach {
                    do {
                        let outcome = try ChildProcess.run("/bin/echo", arguments: ["\(starter)-\(run)"])
                        if outcome.termination != .exited(0) || outcome.outputText != "\(starter)-\(run)\n" {
                            failures.withLock {
                                $0.append("\(starter)-\(run): \(outcome.termination) \(outcome.outputText)")
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("\(starter)-\(run): \(error)") }
                    }
                }
                starting.leave()
            }
        }
        let finished = starting.wait(timeout: .now() + 150)
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(finished == .success, "the starts did not finish within 150 s")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")
    }

    /// A child whose `ChildProcess` is gone without a wait (a test that only kills its server) is reaped anyway,
    /// as Foundation's `Process` reaps every child.
    @Test(.timeLimit(.minutes(1)))
    func aChildNobodyWaitsForIsReapedOnceItEnds() throws {
        var pid: pid_t = 0
        do {
            let child = try ChildProcess.start(
                "sleep", arguments: ["600"], standardInput: .null, standardOutput: .null, standardError: .null)
            pid = child.pid
            child.send(SIGKILL)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while kill(pid, 0) == 0 && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(kill(pid, 0) != 0 && errno == ESRCH, "\(pid) is still there (a zombie nobody reaped)")
    }

    @Test func exitStatusesSignalsAndOutput() throws {
        let run = try ChildProcess.run("/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(run.termination == .exited(3))
        #expect(run.outputText == "out\n")
        #expect(run.errorText == "err\n")
        let killed = try ChildProcess.run("/bin/sh", arguments: ["-c", "kill -TERM $$"])
        #expect(killed.termination == .signaled(SIGTERM))
        #expect(killed.status == SIGTERM)
    }

    @Test func environmentDirectoryAndInput() throws {
        let run = try ChildProcess.run(
            "/bin/sh", arguments: ["-c", "pwd; echo \"$FOLIO_CHILD_TEST\"; cat"],
            environment: ["FOLIO_CHILD_TEST": "set", "PATH": "/usr/bin:/bin"], directory: "/tmp")
        #expect(run.outputText == "/tmp\nset\n", "standard input is /dev/null by default")

        let child = try ChildProcess.start("/bin/cat", standardInput: .pipe)
        let output = OutputCollector(child.standardOutput!)
        let errors = OutputCollector(child.standardError!)
        let input = try #require(child.standardInput)
        _ = "fed\n".withCString { write(input, $0, 4) }
        close(input)
        #expect(output.waitForText() == "fed\n")
        #expect(errors.waitForText() == "")
        #expect(child.wait() == .exited(0))
        #expect(!child.isRunning)
        #expect(child.ended == .exited(0))
    }

    @Test func aTerminalForStandardError() throws {
        let child = try ChildProcess.start(
            "/bin/sh", arguments: ["-c", "test -t 2 && echo terminal >&2; test -t 1 || echo pipe"],
            standardError: .terminal)
        let output = OutputCollector(child.standardOutput!)
        let errors = OutputCollector(child.standardError!)
        #expect(child.wait() == .exited(0))
        #expect(output.waitForText() == "pipe\n")
        #expect(errors.waitForText().hasPrefix("terminal"))
    }

    @Test func aMissingExecutableOrDirectoryIsAnError() throws {
        #expect(throws: ChildProcessError.self) { try ChildProcess.start("/nonexistent/folio-child-test") }
        #expect(throws: ChildProcessError.self) { try ChildProcess.start("folio-child-test-not-in-path") }
        #expect(throws: ChildProcessError.self) { try ChildProcess.start("/bin/true", directory: "/nonexistent") }
    }

    @Test func onlyTheStandardDescriptorsAreInherited() throws {
        // A descriptor this process holds without close-on-exec is not the child's.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let run = try ChildProcess.run("/bin/sh", arguments: ["-c", "ls /proc/self/fd"])
        let descriptors = run.outputText.split(separator: "\n").compactMap { Int($0) }
        #expect(descriptors.allSatisfy { $0 <= 3 }, "\(descriptors)")  // 3: the directory ls reads
    }
}
