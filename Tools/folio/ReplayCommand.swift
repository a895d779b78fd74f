import ArgumentParser
import FolioReports
import FolioSimulator
import Foundation

/// `folio replay FILE|DIR...`: runs scenario files; exit 0 when every expectation held, 1 when one failed, 2 for
/// invalid input (then nothing runs).
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run scenario files (SCENARIOS.md) on simulated devices; exit 1 if an expectation fails.",
        discussion: """
            Every file is read before anything runs: one invalid file (exit 2) stops them all, with each problem \
            at FILE:LINE:COLUMN. A directory stands for the .yaml and .yml files under it, in name order.
            """)

    @Argument(help: "Scenario files, or directories of them.")
    var paths: [String]

    @Option(help: "Write one report per scenario in this format: md, html or json.")
    var report: ReportFormat?

    @Option(help: "The directory for reports (created if needed).")
    var out: String?

    @Option(help: "Run devices' libraries under this directory (default: a temporary one).")
    var workDir: String?

    @Flag(help: "Keep each run's device libraries (under --work-dir) to look at them with `folio inspect`.")
    var keep = false

    func validate() throws {
        if report != nil, out == nil { throw ValidationError("--report needs --out DIR: where to write the reports") }
        if out != nil, report == nil { throw ValidationError("--out needs --report md, html or json") }
        if keep, workDir == nil { throw ValidationError("--keep needs --work-dir DIR: where to keep the libraries") }
    }

    func run() async throws {
        let files = try ScenarioFiles.collect(paths)
        let scenarios = try ScenarioFiles.parse(files)
        let simulator = Simulator(workDirectory: workDir.map { URL(fileURLWithPath: $0, isDirectory: true) }, keepsFiles: keep)
        var failed = 0
        for (file, scenario) in scenarios {
            let result = await simulator.run(scenario)
            if result.passed {
                print("PASS  \(file)  \(summary(of: result))")
            } else {
                failed += 1
                print("FAIL  \(file)  \(summary(of: result))")
                for failure in result.failures {
                    // `file:line:` as compilers print it, so editors and CI logs link to the step.
                    let location = failure.line > 0 ? "\(file):\(failure.line)" : file
                    print("  \(location): \(failure.place): \(failure.message)")
                }
            }
            if let report, let out {
                var value = result.report
                value.source = file
                try ReportOutput.write(value, as: report, named: file, into: out)
            }
        }
        let passed = scenarios.count - failed
        print("\(scenarios.count) scenario\(scenarios.count == 1 ? "" : "s"): \(passed) passed, \(failed) failed")
        if failed > 0 { throw CommandFailure(message: "\(failed) scenario\(failed == 1 ? "" : "s") failed", exitCode: 1) }
    }

    private func summary(of result: SimulationResult) -> String {
        let conflicts = result.report.documents.reduce(0) { $0 + $1.conflicts.count }
        return "(\(result.steps.count) step\(result.steps.count == 1 ? "" : "s"), \(conflicts) conflict\(conflicts == 1 ? "" : "s"))"
    }
}

/// Finding and reading scenario files.
enum ScenarioFiles {
    /// The files `paths` name: files as given, directories as the `.yaml`/`.yml` files under them, sorted.
    static func collect(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        let manager = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure.invalidInput("\(path): no such file or directory")
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let found = (manager.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
                .sorted()
                .map { (path as NSString).appendingPathComponent($0) }
            guard !found.isEmpty else { throw CommandFailure.invalidInput("\(path): no .yaml scenario files in this directory") }
            files += found
        }
        return files
    }

    /// Every file read strictly; all problems of all files reported together (exit 2) before anything runs.
    static func parse(_ files: [String]) throws -> [(String, Scenario)] {
        var scenarios: [(String, Scenario)] = []
        var problems: [String] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                problems.append("\(file): cannot read the file")
                continue
            }
            do {
                scenarios.append((file, try ScenarioParser.parse(data: data, file: file)))
            } catch {
                problems.append(error.description)
            }
        }
        guard problems.isEmpty else {
            throw CommandFailure.invalidInput(problems.joined(separator: "\n") + "\nnothing was run")
        }
        return scenarios
    }
}

/// A report format on the command line.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case md, html, json
}

/// Writing reports to files.
enum ReportOutput {
    /// The report's text in `format`.
    static func render(_ report: ConflictReport, as format: ReportFormat) -> String {
        switch format {
        case .md: report.markdown()
        case .html: report.html()
        case .json: report.json()
        }
    }

    /// Writes `report` as `DIR/NAME.FORMAT`, NAME being the source file's name without its extension.
    static func write(_ report: ConflictReport, as format: ReportFormat, named source: String, into directory: String) throws {
        let name = ((source as NSString).lastPathComponent as NSString).deletingPathExtension
        let url = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent("\(name).\(format.rawValue)")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(render(report, as: format).utf8).write(to: url, options: .atomic)
        } catch {
            throw CommandFailure.invalidInput("cannot write \(url.path): \(error.localizedDescription)")
        }
    }
}
