// The simulator's commands exist only with the `Simulator` trait (on by default; see Package.swift).
#if Simulator
    import ArgumentParser
    import FolioFiles
    import FolioReports
    import FolioSimulator
    import Foundation

    /// `folio replay FILE|DIR...`: runs scenario files; exit 0 when every expectation held, 1 when one failed, 2 for
    /// invalid input (then nothing runs).
    struct ReplayCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay",
            abstract: "Run scenario files (docs/scenarios.md) on simulated devices; exit 1 if an expectation fails.",
            discussion: """
                Every file is read before anything runs: one invalid file (exit 2) stops them all, with each problem \
                at FILE:LINE:COLUMN. A directory stands for the .yaml and .yml files under it, in name order. A report \
                is named after its scenario file, under the same subdirectories as the file under the directory given \
                (Scenarios/sync/a.yaml → OUT/sync/a.md). Interrupted (Ctrl-C, SIGTERM), it removes the libraries of \
                its runs (not kept ones) and exits 130 (143).
                """)

        @Argument(help: "Scenario files, or directories of them.")
        var paths: [String]

        @Option(help: "Write one report per scenario, in this format.")
        var report: ReportFormat?

        @Option(help: "The directory for reports (created if needed).")
        var out: String?

        @OptionGroup var workDirectory: WorkDirectoryOptions<Self>

        @Flag(
            help: """
                Keep each run's device libraries (under --work-dir, each named after its device) to look at them with \
                `folio inspect`; each is printed after its scenario.
                """)
        var keep = false

        func validate() throws {
            if report != nil, out == nil {
                throw ValidationError("--report needs --out DIR: where to write the reports")
            }
            if out != nil, report == nil { throw ValidationError("--out needs --report md, html or json") }
            if keep, workDirectory.workDir == nil {
                throw ValidationError("--keep needs --work-dir DIR: where to keep the libraries")
            }
        }

        func run() async throws {
            let fileSystem = PosixFileSystem()
            let files = try ScenarioFiles.collect(paths)
            if let report, let out { try ScenarioFiles.checkReportNames(of: files, as: report, in: out) }
            // Every file parsed (or none ran): the scenarios line up with the files.
            let scenarios = try ScenarioFiles.parse(files.map(\.path), fileSystem: fileSystem)
            let parent = try workDirectory.prepare() ?? FileManager.default.temporaryDirectory
            let runs = RunFileSystem(runsIn: parent)
            let keep = keep
            let interruption = await Interruption { signal in
                await runs.interrupt(removingRuns: !keep)
                let fate = keep ? "the kept libraries stay in \(parent.path)" : "its run directories are removed"
                FileHandle.standardError.write(
                    Data(
                        TerminalText.escaped(
                            "folio: interrupted by \(Interruption.name(of: signal)); \(fate)\n",
                            keepingLines: true
                        ).utf8))
            }
            try await interruption.during { try await replay(files, scenarios, in: parent, runs: runs, interruption) }
        }

        private func replay(
            _ files: [ScenarioFiles.File], _ scenarios: [(String, Scenario)], in parent: URL, runs: RunFileSystem,
            _ interruption: Interruption
        ) async throws {
            let fileSystem = PosixFileSystem()
            let simulator = Simulator(workDirectory: parent, keepsFiles: keep, fileSystem: runs)
            var failed = 0
            for (found, (file, scenario)) in zip(files, scenarios) {
                let result = await simulator.run(scenario)
                await interruption.holdIfInterrupted()
                if result.passed {
                    printEscaped("PASS  \(file)  \(summary(of: result))")
                } else {
                    failed += 1
                    printEscaped("FAIL  \(file)  \(summary(of: result))")
                    for failure in result.failures {
                        // `file:line:` as compilers print it, so editors and CI logs link to the step.
                        let location = failure.line > 0 ? "\(file):\(failure.line)" : file
                        // The message quotes the scenario's names and what the devices hold: escaped, one line each.
                        printEscaped("  \(location): \(failure.place): \(failure.message)")
                    }
                }
                // Where each device's library was left, in the file's order (device names escaped, as everywhere).
                for device in scenario.devices {
                    if let directory = result.deviceDirectories[device.name] {
                        printEscaped("  kept \(device.name) in \(directory.path)")
                    }
                }
                if let report, let out {
                    var value = result.report
                    value.source = file
                    try ReportOutput.write(
                        value, as: report, named: found.reportName, into: out, fileSystem: fileSystem)
                }
            }
            let passed = scenarios.count - failed
            print("\(scenarios.count) scenario\(scenarios.count == 1 ? "" : "s"): \(passed) passed, \(failed) failed")
            if failed > 0 {
                throw CommandFailure(message: "\(failed) scenario\(failed == 1 ? "" : "s") failed", exitCode: 1)
            }
        }

        private func summary(of result: SimulationResult) -> String {
            let conflicts = result.report.documents.reduce(0) { $0 + $1.conflicts.count }
            return
                "(\(result.steps.count) step\(result.steps.count == 1 ? "" : "s"), \(conflicts) conflict\(conflicts == 1 ? "" : "s"))"
        }
    }

    extension ReplayCommand: WorkDirectoryHelp {
        static var workDirectoryHelp: ArgumentHelp {
            "Run devices' libraries under this directory (default: a temporary one)."
        }
    }

    /// Finding and reading scenario files.
    enum ScenarioFiles {
        /// A scenario file to run.
        struct File {
            /// The path, as given or as found under a directory given.
            var path: String
            /// Its report's name without the extension: the file's name, after the subdirectories it was found in
            /// under a directory given (`sync/a` for `Scenarios/sync/a.yaml` when `Scenarios` was given).
            var reportName: String
        }

        /// The files `paths` name: files as given, directories as the `.yaml`/`.yml` files under them, sorted; a file
        /// named twice (by itself and by its directory, say) runs once.
        static func collect(_ paths: [String]) throws -> [File] {
            var files: [File] = []
            var seen: Set<String> = []
            let manager = FileManager.default
            for path in paths {
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    throw CommandFailure.invalidInput("\(path): no such file or directory")
                }
                let found: [File]
                if isDirectory.boolValue {
                    found = (manager.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                        .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                        .sorted()
                        .map {
                            File(
                                path: (path as NSString).appendingPathComponent($0),
                                reportName: ($0 as NSString).deletingPathExtension)
                        }
                    guard !found.isEmpty else {
                        throw CommandFailure.invalidInput("\(path): no .yaml scenario files in this directory")
                    }
                } else {
                    found = [
                        File(
                            path: path,
                            reportName: ((path as NSString).lastPathComponent as NSString).deletingPathExtension
                        )
                    ]
                }
                for file in found where seen.insert(URL(fileURLWithPath: file.path).standardizedFileURL.path).inserted {
                    files.append(file)
                }
            }
            return files
        }

        /// Refuses (exit 2, before anything runs) two files whose reports would have one name, so that neither
        /// report overwrites the other.
        static func checkReportNames(of files: [File], as format: ReportFormat, in directory: String) throws {
            let byName = Dictionary(grouping: files, by: \.reportName)
            let clashes = byName.keys.sorted().filter { byName[$0]!.count > 1 }.map { name in
                let paths = byName[name]!.map(\.path)
                let report = (directory as NSString).appendingPathComponent("\(name).\(format.rawValue)")
                return
                    "\(paths.joined(separator: " and ")) would both write \(report): replay them separately or rename one"
            }
            guard clashes.isEmpty else {
                throw CommandFailure.invalidInput(clashes.joined(separator: "\n") + "\nnothing was run")
            }
        }

        /// Every file read strictly, through `fileSystem` and no larger than a scenario may be; all problems of all files
        /// reported together (exit 2) before anything runs.
        static func parse(_ files: [String], fileSystem: any FileSystem) throws -> [(String, Scenario)] {
            var scenarios: [(String, Scenario)] = []
            var problems: [String] = []
            for file in files {
                // A file the user names may be a symbolic link; the link is theirs to follow, so it is resolved here
                // (the file system itself never follows one).
                let url = URL(fileURLWithPath: file, isDirectory: false).resolvingSymlinksInPath()
                let data: Data
                do {
                    data = try fileSystem.contents(of: url, limit: ScenarioParser.maximumFileBytes)
                } catch let error as FileSystemError where error.code == .tooLarge {
                    let size = (try? fileSystem.attributes(at: url).size).map(String.init) ?? "more"
                    let position = ScenarioFilePosition(file: file, line: 1, column: 1)
                    problems.append(
                        ScenarioError(
                            .malformedYAML,
                            "the file has \(size) bytes, more than a scenario may (\(ScenarioParser.maximumFileBytes)); "
                                + "split it into several scenarios", location: position
                        ).description)
                    continue
                } catch {
                    problems.append("\(file): cannot read the file")
                    continue
                }
                do {
                    scenarios.append((file, try ScenarioParser.parse(data: data, file: file)))
                } catch {
                    problems.append("\(error)")
                }
            }
            guard problems.isEmpty else {
                throw CommandFailure.invalidInput(problems.joined(separator: "\n") + "\nnothing was run")
            }
            return scenarios
        }
    }
#endif
