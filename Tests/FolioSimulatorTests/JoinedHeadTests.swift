import FolioSimulator
import Foundation
import Testing

/// A change that joins heads must be replayed, on every device, on the version its author showed. Found by
/// `folio fuzz --seeds 20001...21500 --devices 2...5 --steps 150` (seed 20391), shrunk, then cut by hand.
@Suite struct JoinedHeadTests {
    /// The iPhone's edit and the Mac's compete; the iPad builds on the iPhone's; the iPhone then shows the Mac's
    /// (it wins over the iPad's) but moves the document on its own line, a head that only the iPad's edit
    /// supersedes. Its next edit joins that move (a device's changes form one line) without the iPad's edit, so
    /// the parents alone no longer say which contents the edit was made on: every other device replayed it on the
    /// iPhone's old text, and the devices never converged.
    @Test func anEditJoiningItsAuthorsSupersededMoveShowsTheSameEverywhere() async throws {
        let scenario = try ScenarioParser.parse(yaml: """
            name: A superseded move joined by an edit
            seed: 20391
            strategy: askUser
            devices: [{name: iPad}, {name: Mac}, {name: iPhone}]
            steps:
              - create: {device: iPhone, document: Notes, text: "base\\n"}
              - sync: all
              - edit: {device: iPhone, document: Notes, append: "phone\\n"}
              - edit: {device: Mac, document: Notes, append: "mac\\n"}
              - sync: all
              - move: {device: Mac, document: Notes, to: local}
              - edit: {device: iPad, document: Notes, append: "ipad\\n"}
              - sync: all
              - move: {device: iPhone, document: Notes, to: local}
              - edit: {device: iPhone, document: Notes, append: "more\\n"}
              - sync: all
              - expect: {converged: true, lostChanges: 0}
              - expect: {device: iPad, document: Notes, text: "base\\nmac\\nmore\\n"}
            """, file: "superseded-move.yaml")
        let result = await Simulator().run(scenario)
        #expect(result.failures.map(\.description) == [])

        // The case is the one described: the move was made on the iPhone's superseded edit alone, and the edit
        // that joins it records the choice of the version shown (the Mac's), which every device replays.
        let graph = try #require(result.report.documents.first?.graph)
        let move = try #require(graph.first { $0.id == "iPhone:4" })
        #expect(move.kind == "move" && move.parents == ["iPhone:3"])
        let choice = try #require(graph.first { $0.id == "iPhone:5" })
        #expect(choice.isResolution && Set(choice.parents) == ["iPhone:4", "Mac:2"], "\(choice)")
    }
}
