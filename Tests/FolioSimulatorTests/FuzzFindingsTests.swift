import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// What `folio fuzz` found, kept so that a finding fixed once stays fixed: the seeds that broke an invariant, run
/// again as `folio fuzz --seeds N` runs them, and their shrunk scenarios (`FuzzFindings/`, the files `folio fuzz`
/// printed, named after their seeds) where the shrunk scenario reproduces the same failure.
@Suite(.workPool) struct FuzzFindingsTests {
    /// Seeds of `folio fuzz --seeds 1...10000` (2 to 5 devices, 50 steps) that broke an invariant: after a full sync,
    /// devices showed different pages (a choice among versions replayed in a character merge took the other parts
    /// of whichever version came last in the replay's order, not of the version it kept: 50 to 8715); devices showed
    /// different texts after silent merges (a deleted document did not show the merge its heads make on every other
    /// device: 1347; a version two devices reached apart merged by one head, then an edit on every head merged both:
    /// 5312).
    static let seeds: [UInt64] = [50, 256, 1347, 2273, 4113, 4621, 4958, 5312, 7979, 8715]

    @Test(arguments: seeds)
    func aSeedThatBrokeAnInvariantPasses(seed: UInt64) async {
        let outcome = await Fuzzer(shrinks: false).run(seed: seed)
        #expect(outcome.violations.isEmpty, "seed \(seed): \(outcome.violations)")
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("FuzzFindings")

    static let files = scenarioFiles(in: directory)

    @Test func findingsAreKept() {
        #expect(Self.files.count >= 3)
    }

    @Test(arguments: files)
    func aFindingPasses(file: String) async throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(file))
        let scenario = try ScenarioParser.parse(data: data, file: "FuzzFindings/\(file)")
        let result = await Simulator().run(scenario)
        #expect(result.passed, "\(file): \(result.failures.map(\.description).joined(separator: "; "))")
    }
}
