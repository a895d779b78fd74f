import FolioSimulator
import Foundation
import Testing

/// Devices that merge one conflict apart must stop merging once there is nothing left to merge.
@Suite struct MergeSettlementTests {
    /// Scenarios/22: seed 300288 of `folio fuzz --devices 2...3 --steps 400`, shrunk, cut by hand. The iPad edits
    /// offline while the iPhone sets a field of r3 and later removes r3; when all three come back, each device
    /// merges what it has received so far. Merged all at once from the ancestor the three versions share (which
    /// lacks the iPhone's edit of r3, as the iPad never saw it), the Mac's version looked as if it had edited r3 and
    /// the iPhone's removal lost; merges made from different ancestors then disagreed about r3, and merging those
    /// merges flipped it back and forth: the devices recorded merges in answer to each other forever and sync never
    /// settled. Merged two at a time, the closest pair first, the removal stands and every device agrees.
    /// (``DocumentStrategyTests`` covers the last resort, when merges still disagree.)
    @Test func threeVersionsMergeTwoAtATimeAndSettle() async throws {
        let file = ScenarioReplayTests.scenarios.appendingPathComponent("22-three-devices-merge-apart.yaml")
        let scenario = try ScenarioParser.parse(data: try Data(contentsOf: file), file: file.path)
        let result = await Simulator().run(scenario)
        #expect(result.failures.map(\.description) == [])

        let document = try #require(result.report.documents.first)
        // Every edit merged: the iPad's field, the iPhone's city and its removal of r3.
        for device in document.devices {
            #expect(device.contents == ["r1: city=done, name=eggs, phone=plan"], "\(device.device)")
        }
        // Settled by merging alone: no merges disagreed, so none had to be dropped.
        #expect(Set(document.conflicts.compactMap(\.strategy)) == ["merge"])
        #expect(document.losses.allSatisfy { $0.discarded.isEmpty })
    }
}
