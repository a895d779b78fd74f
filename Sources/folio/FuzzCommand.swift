// The simulator's commands exist only with the `Simulator` trait (on by default; see Package.swift).
#if Simulator
    import ArgumentParser
    import FolioFiles
    import FolioSimulator
    import Foundation
    import Synchronization

    /// `folio fuzz --seeds A...B`: random scenarios with the invariants checked; exit 1 with the seed and a shrunk
    /// scenario for each failure.
    struct FuzzCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fuzz",
            abstract: "Run random scenarios and check Folio's invariants; print a shrunk scenario for each failure.",
            discussion: """
                Each seed gives one scenario (the same seed, the same scenario). A failure prints its seed and the \
                shrunk scenario as YAML, which `folio replay` reproduces; with --out, the YAML is also written there. \
                Exit 0 when every scenario kept the invariants, 1 when a seed broke one, 2 for invalid options; \
                interrupted (Ctrl-C, SIGTERM), it removes the libraries of its runs and exits 130 (143).
                """)

        @Option(
            help: """
                The seeds, as A...B (inclusive) or a single number; at most \(CountBounds.seeds.upperBound) of them.
                """, transform: NumberRange.init(argument:))
        var seeds: NumberRange

        @Option(
            help: """
                How many devices a scenario has, as A...B or a single number, within \
                \(CountBounds.written(CountBounds.devices)) (default: 2...5).
                """,
            transform: NumberRange.init(argument:))
        var devices = NumberRange(range: 2...5)

        @Option(help: "How many steps a scenario has, \(CountBounds.written(CountBounds.steps)).")
        var steps = 50

        // Optional, so that the help says "the number of cores" rather than this machine's count.
        @Option(
            help: """
                How many scenarios run at once, \(CountBounds.written(CountBounds.jobs)) (default: the number of cores).
                """)
        var jobs: Int?

        @Option(help: "Write each failure's shrunk scenario here as fuzz-SEED.yaml.")
        var out: String?

        @OptionGroup var workDirectory: WorkDirectoryOptions<Self>

        func validate() throws {
            let count = seeds.count
            guard count.map(CountBounds.seeds.contains) ?? false else {
                throw ValidationError(
                    "--seeds must hold \(CountBounds.written(CountBounds.seeds)) seeds, not "
                        + "\(count.map(String.init) ?? "18446744073709551616") (\(CountBounds.written(seeds.range)))")
            }
            guard CountBounds.devices.contains(devices.range.lowerBound),
                CountBounds.devices.contains(devices.range.upperBound)
            else {
                throw ValidationError(
                    "--devices must be within \(CountBounds.written(CountBounds.devices)), not \(devices)")
            }
            try CountBounds.check(steps, of: "--steps", within: CountBounds.steps)
            if let jobs { try CountBounds.check(jobs, of: "--jobs", within: CountBounds.jobs) }
        }

        func run() async throws {
            let parent = try workDirectory.prepare() ?? FileManager.default.temporaryDirectory
            let runs = RunFileSystem(runsIn: parent)
            let progress = Progress(total: seeds.range.count)
            let interruption = await Interruption { signal in
                await runs.interrupt(removingRuns: true)
                progress.endWithoutWaiting()
                FileHandle.standardError.write(
                    Data(
                        "folio: interrupted by \(Interruption.name(of: signal)); its run directories are removed\n".utf8
                    ))
            }
            try await interruption.during {
                try await fuzz(in: parent, runs: runs, progress: progress, interruption)
            }
        }

        private func fuzz(
            in parent: URL, runs: RunFileSystem, progress: Progress, _ interruption: Interruption
        ) async throws {
            var configured = Fuzzer(
                generator: ScenarioGenerator(
                    devices: Int(devices.range.lowerBound)...Int(devices.range.upperBound), steps: steps),
                workDirectory: parent, fileSystem: runs)
            configured.stepCounter = progress.steps
            let fuzzer = configured
            // On a terminal, the line moves while a long scenario runs, not only when one ends.
            let ticker = progress.isTerminal ? Task { await progress.keepCurrent() } : nil
            defer { ticker?.cancel() }
            var failures = 0
            let started = progress.started
            var done = 0
            let jobs = self.jobs ?? ProcessInfo.processInfo.activeProcessorCount
            // `jobs` seeds run at all times; outcomes are printed in seed order (each waits for the seeds before it), so
            // the output is the same on every run. No seed starts more than `window` seeds ahead of the printing.
            let total = seeds.range.count
            let window = jobs * 64
            await withTaskGroup(of: Fuzzer.Outcome.self) { group in
                var launched = 0
                var running = 0
                var finished: [UInt64: Fuzzer.Outcome] = [:]
                func startMore() {
                    while running < jobs, launched < total, launched - done < window {
                        let seed = seeds.range.lowerBound + UInt64(launched)
                        group.addTask { await fuzzer.run(seed: seed) }
                        launched += 1
                        running += 1
                    }
                }
                startMore()
                while let outcome = await group.next() {
                    await interruption.holdIfInterrupted()
                    running -= 1
                    finished[outcome.seed] = outcome
                    while done < total, let ready = finished.removeValue(forKey: seeds.range.lowerBound + UInt64(done))
                    {
                        done += 1
                        if !ready.violations.isEmpty {
                            failures += 1
                            progress.printing { report(ready) }
                        }
                    }
                    progress.show(done: done, failures: failures)
                    startMore()
                }
            }
            ticker?.cancel()
            progress.end()
            let seconds = Date().timeIntervalSince(started)
            print(
                "\(done) scenario\(done == 1 ? "" : "s") (seeds \(seeds)), \(failures) violation\(failures == 1 ? "" : "s"), "
                    + String(format: "%.1f s, %.0f scenarios/min", seconds, Double(done) / max(seconds, 0.001) * 60))
            if failures > 0 {
                throw CommandFailure(
                    message: "\(failures) seed\(failures == 1 ? "" : "s") broke an invariant", exitCode: 1)
            }
        }

        private func report(_ outcome: Fuzzer.Outcome) {
            print("FAIL  seed \(outcome.seed)")
            for violation in outcome.violations { printEscaped("  \(violation)") }
            guard let shrunk = outcome.shrunk else { return }
            print(
                "  shrunk to \(shrunk.steps.count) step\(shrunk.steps.count == 1 ? "" : "s"); replay it with folio replay:"
            )
            print(
                TerminalText.escaped(
                    shrunk.yaml.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(
                        separator: "\n"), keepingLines: true))
            if let out {
                let url = URL(fileURLWithPath: out, isDirectory: true).appendingPathComponent(
                    "fuzz-\(outcome.seed).yaml")
                do {
                    try CommandFiles.write(
                        Data(shrunk.yaml.utf8), to: url, makingDirectories: true, on: PosixFileSystem())
                    print("  written to \(url.path)")
                } catch {
                    // The YAML is printed above: nothing is lost, but the user asked for the file.
                    FileHandle.standardError.write(
                        Data("folio: cannot write \(url.path): \(CommandFiles.reason(error))\n".utf8))
                }
            }
        }
    }

    extension FuzzCommand: WorkDirectoryHelp {
        static var workDirectoryHelp: ArgumentHelp {
            "Run devices' libraries under this directory (default: a temporary one; a tmpfs is fastest)."
        }
    }

    /// `A...B` or `N` on the command line.
    struct NumberRange: CustomStringConvertible {
        var range: ClosedRange<UInt64>

        init(range: ClosedRange<UInt64>) {
            self.range = range
        }

        /// Reads an option's value; the error says what to write instead (the parser names the option and the value).
        init(argument: String) throws(ValidationError) {
            let parts = argument.components(separatedBy: "...")
            guard (1...2).contains(parts.count), let low = UInt64(parts[0]), let high = UInt64(parts.last!) else {
                throw ValidationError("write a number, such as 7, or a range, such as 1...1000")
            }
            guard low <= high else {
                throw ValidationError("the range runs backwards; write the smaller number first: \(high)...\(low)")
            }
            range = low...high
        }

        /// How many numbers the range holds; `nil` for all of them (2^64, which no `UInt64` holds).
        var count: UInt64? {
            let (count, overflow) = (range.upperBound - range.lowerBound).addingReportingOverflow(1)
            return overflow ? nil : count
        }

        var description: String {
            range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
        }
    }

    /// A progress line on standard error when it is a terminal, and nothing otherwise, so piped output is only the
    /// results: scenarios done, violations, steps done and the rate, rewritten in place.
    final class Progress: Sendable {
        let total: Int
        let isTerminal: Bool
        let started = Date()
        /// The steps the runs have done, counted as they go.
        let steps = StepCounter()

        private struct State {
            var done = 0
            var failures = 0
            var ended = false
        }

        private let state = Mutex(State())

        init(total: Int, isTerminal: Bool = isatty(STDERR_FILENO) != 0) {
            self.total = total
            self.isTerminal = isTerminal
        }

        /// Shows `done` scenarios and `failures` among them.
        func show(done: Int, failures: Int) {
            state.withLock { state in
                state.done = done
                state.failures = failures
                draw(state)
            }
        }

        /// Shows the line again every quarter of a second (with the steps done meanwhile) until the task is cancelled.
        func keepCurrent() async {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                state.withLock { draw($0) }
            }
        }

        /// Runs `body`, which prints results, with the line cleared, and flushes standard output before the line comes
        /// back, so the two never mix.
        func printing(_ body: () -> Void) {
            state.withLock { state in
                erase()
                body()
                fflush(nil)
                draw(state)
            }
        }

        /// Clears the line for good, unless a print holds it (one blocked on a pipe nobody reads): an interruption
        /// does not wait for it.
        func endWithoutWaiting() {
            _ = state.withLockIfAvailable { state in
                state.ended = true
                erase()
            }
        }

        /// Clears the line for good.
        func end() {
            state.withLock { state in
                state.ended = true
                erase()
            }
        }

        private func draw(_ state: State) {
            guard isTerminal, !state.ended else { return }
            let rate = Double(state.done) / max(Date().timeIntervalSince(started), 0.001) * 60
            let perMinute = String(format: "%.0f", rate)
            FileHandle.standardError.write(
                Data(
                    "\r\u{1B}[K\(state.done)/\(total) scenarios, \(state.failures) violations, \(steps.count) steps, \(perMinute) scenarios/min "
                        .utf8))
        }

        private func erase() {
            guard isTerminal else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }
#endif
