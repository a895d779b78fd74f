import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// Every key of `expect` reads to its assertion.
@Suite(.workPool) struct ScenarioExpectationTests {
    typealias Expectation = Scenario.Expectation

    static let cases: [(step: String, expectation: Expectation)] = [
        ("{document: Notes, state: normal}", Expectation(document: "Notes", state: .normal)),
        (
            "{document: Notes, device: Mac, state: inConflict}",
            Expectation(document: "Notes", device: "Mac", state: .inConflict)
        ),
        ("{document: Notes, state: closed}", Expectation(document: "Notes", state: .closed)),
        ("{document: Notes, state: savingError}", Expectation(document: "Notes", state: .savingError)),
        ("{document: Notes, conflictVersions: 2}", Expectation(document: "Notes", conflictVersions: 2)),
        ("{document: Notes, text: \"Hello world\\n\"}", Expectation(document: "Notes", text: "Hello world\n")),
        ("{document: Notes, contains: milk}", Expectation(document: "Notes", contains: "milk")),
        (
            "{document: List, records: {r1: {name: Ann}, r2: {}}}",
            Expectation(document: "List", records: ["r1": ["name": "Ann"], "r2": [:]])
        ),
        (
            "{document: Album, images: [cover.png, b.jpg]}",
            Expectation(document: "Album", images: ["cover.png", "b.jpg"])
        ),
        ("{document: Album, images: []}", Expectation(document: "Album", images: [])),
        ("{document: Notes, exists: false}", Expectation(document: "Notes", exists: false)),
        (
            "{document: Notes, device: Phone, exists: true}",
            Expectation(document: "Notes", device: "Phone", exists: true)
        ),
        (
            "{document: Notes, device: Phone, versions: 3, namedVersions: [Draft, Final], losses: 0}",
            Expectation(document: "Notes", device: "Phone", versions: 3, namedVersions: ["Draft", "Final"], losses: 0)
        ),
        ("{converged: true}", Expectation(converged: true)),
        ("{lostChanges: 0}", Expectation(lostChanges: 0)),
        ("{converged: false, lostChanges: 3}", Expectation(converged: false, lostChanges: 3)),
        (
            "{document: Notes, state: normal, text: \"\", converged: true}",
            Expectation(document: "Notes", state: .normal, text: "", converged: true)
        ),
    ]

    @Test(arguments: cases)
    func expectationReads(step: String, expectation: Expectation) throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments("  - expect: " + step), file: "expect.yaml")
        #expect(scenario.steps.last?.action == .expect(expectation))
        #expect(scenario.steps.last?.line == 10)
    }

    @Test func everyExpectationKeyIsCovered() {
        let written = Set(
            Self.cases.flatMap {
                $0.step.split(separator: ",").compactMap { part in
                    part.split(separator: ":").first.map { $0.trimmingCharacters(in: ["{", " "]) }
                }
            })
        #expect(Set(Expectation.keys).isSubset(of: written))
    }

    @Test func blockStyleExpectationsFromTheContract() throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments(
                """
                  - expect:
                      document: Notes            # the document the keys below speak of (by display name)
                      device: Mac                # optional; default: every device
                      state: inConflict          # normal | inConflict | closed | savingError
                      conflictVersions: 2        # how many competing versions are surfaced
                      text: "Hello world\\n"      # exact contents (text model)
                      contains: "milk"           # substring (text model)
                  - expect:
                      converged: true
                      lostChanges: 0
                """), file: "expect.yaml")
        #expect(
            scenario.steps.dropFirst(3).map(\.action) == [
                .expect(
                    Expectation(
                        document: "Notes", device: "Mac", state: .inConflict, conflictVersions: 2,
                        text: "Hello world\n", contains: "milk")),
                .expect(Expectation(converged: true, lostChanges: 0)),
            ])
        #expect(scenario.steps.dropFirst(3).map(\.line) == [10, 17])
    }
}
