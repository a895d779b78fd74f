import FolioSimulator
import Foundation
import Testing

/// A change that joins heads must be replayed, on every device, on the version its author showed, and renames, moves
/// and deletes must not hide a version. Each test is a `folio fuzz` failure with more devices than the benchmark's
/// three, shrunk, then cut by hand.
@Suite struct JoinedHeadTests {
    /// Seed 20391 of `--devices 2...5 --steps 150`. The iPhone's edit and the Mac's compete; the iPad builds on the iPhone's; the iPhone then shows the Mac's
    /// (it wins over the iPad's) but moves the document on its own line, a head that only the iPad's edit
    /// supersedes. Its next edit joins that move (a device's changes form one line) without the iPad's edit, so
    /// the parents alone no longer say which contents the edit was made on: every other device replayed it on the
    /// iPhone's old text, and the devices never converged. The moves go to the shared container, where the document
    /// already is: a move to the local one would keep the document on its device, and the case needs the moves to
    /// sync.
    @Test func anEditJoiningItsAuthorsSupersededMoveShowsTheSameEverywhere() async throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
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
                  - move: {device: Mac, document: Notes, to: shared}
                  - edit: {device: iPad, document: Notes, append: "ipad\\n"}
                  - sync: all
                  - move: {device: iPhone, document: Notes, to: shared}
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

    /// Two devices delete the version every device shows while another version competes (seed 109473 of
    /// `--devices 2...5 --steps 50`, after the fix above; the iPad and the Watch swapped places in the list, so that
    /// the iPad's identity, which decides ties, sorts after the Watch's as it did then). Each delete built on the same contents as the other, so
    /// neither may count as building on them: before, each made the other look contentless, the shown version
    /// dropped out of the conflict unrecorded, and the iPad's next edit, made on what was left, was replayed
    /// elsewhere on its own older edit. The conflict stands; the edit joins the deletes and shows the same
    /// everywhere.
    @Test func twoDeletesOfTheShownVersionLeaveTheConflictStanding() async throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Two deletes of one version
                seed: 109473
                model: records
                strategy: askUser
                devices: [{name: Watch}, {name: Mac}, {name: iPhone}, {name: iPad}, {name: Vision}]
                steps:
                  - create: {device: iPhone, document: List, records: {r1: {name: a}, r2: {name: b}}}
                  - sync: all
                  - edit: {device: Watch, document: List, remove: {record: r1}}
                  - edit: {device: iPad, document: List, set: {record: r1, field: name, value: "é"}}
                  - sync: all
                  - delete: {device: iPhone, document: List}
                  - delete: {device: Mac, document: List}
                  - sync: all
                  - expect: {document: List, state: inConflict, conflictVersions: 2}
                  - edit: {device: iPad, document: List, set: {record: r2, field: phone, value: eggs}}
                  - sync: all
                  - expect: {converged: true, lostChanges: 0}
                  - expect: {device: Watch, document: List, records: {r1: {name: "é"}, r2: {name: b, phone: eggs}}}
                """, file: "two-deletes.yaml")
        let result = await Simulator().run(scenario)
        #expect(result.failures.map(\.description) == [])
        // The case is the one described: both deletes were made on the iPad's edit, and the edit after joins both.
        let graph = try #require(result.report.documents.first?.graph)
        let deletes = graph.filter { $0.kind == "delete" }
        #expect(deletes.count == 2 && deletes.allSatisfy { $0.parents == ["iPad:1"] }, "\(deletes)")
        #expect(graph.first { $0.id == "iPad:2" }.map { Set($0.parents) } == Set(deletes.map(\.id)))
    }
}
