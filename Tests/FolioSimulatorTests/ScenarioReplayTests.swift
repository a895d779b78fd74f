import FolioReports
import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// Every scenario in `Scenarios/` passes, and its reports match the golden files in `Golden/` byte for byte.
///
/// After an intended change of the reports, regenerate the golden files with `FOLIO_UPDATE_GOLDEN=1 swift test
/// --filter ScenarioReplayTests` and review the diff.
@Suite(.workPool) struct ScenarioReplayTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let scenarios = repository.appendingPathComponent("Scenarios")
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static let files = scenarioFiles(in: scenarios)

    @Test func thereAreAtLeastFifteenScenarios() {
        #expect(Self.files.count >= 15)
    }

    @Test(arguments: files)
    func scenarioPassesAndMatchesItsGoldenReports(file: String) async throws {
        let data = try Data(contentsOf: Self.scenarios.appendingPathComponent(file))
        let scenario = try ScenarioParser.parse(data: data, file: "Scenarios/\(file)")
        let result = await Simulator().run(scenario)
        #expect(result.passed, "\(file): \(result.failures.map(\.description).joined(separator: "; "))")
        var report = result.report
        report.source = "Scenarios/\(file)"
        let name = (file as NSString).deletingPathExtension
        for (text, suffix) in [(report.json(), "json"), (report.markdown(), "md")] {
            let url = Self.golden.appendingPathComponent("\(name).\(suffix)")
            if ProcessInfo.processInfo.environment["FOLIO_UPDATE_GOLDEN"] == "1" {
                try Data(text.utf8).write(to: url)
                continue
            }
            let expected = try String(contentsOf: url, encoding: .utf8)
            #expect(
                text == expected,
                "\(file): the \(suffix) report differs from Golden/\(name).\(suffix); if intended, regenerate with FOLIO_UPDATE_GOLDEN=1"
            )
        }
    }
}

/// The names of the scenario files (`.yaml`) in `directory`, sorted; none when it cannot be read.
func scenarioFiles(in directory: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
        .filter { $0.hasSuffix(".yaml") }.sorted() ?? []
}
