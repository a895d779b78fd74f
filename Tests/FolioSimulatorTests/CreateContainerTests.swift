import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// A `create` step says where the document is made with `in: local | shared` (shared by default); the canonical
/// writer keeps it, a bad value is refused, and a document made in local stays on its device.
@Suite(.workPool) struct CreateContainerTests {
    @Test func createReadsItsContainerSharedByDefault() throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Containers
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Notes}
                  - create: {device: iPad, document: Diary, in: local}
                  - create: {device: iPad, document: Plan, in: shared}
                """, file: "containers.yaml")
        #expect(
            scenario.steps.map(\.action) == [
                .create(device: "iPad", document: "Notes", model: .text, contents: nil),
                .create(device: "iPad", document: "Diary", model: .text, contents: nil, container: .local),
                .create(device: "iPad", document: "Plan", model: .text, contents: nil, container: .shared),
            ])
        let yaml = scenario.yaml
        #expect(yaml.contains("- create: {device: iPad, document: Diary, in: local}\n"))
        #expect(yaml.contains("- create: {device: iPad, document: Plan}\n"), "shared, the default, is not written")
        #expect(try ScenarioParser.parse(yaml: yaml, file: "again.yaml") == scenario)
    }

    @Test func aBadContainerIsRefused() throws {
        let error = try #require(
            ScenarioParsing.error(
                """
                name: Containers
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Diary, in: locale}
                """))
        #expect(error.code == .invalidValue)
        #expect(error.line == 4)
        #expect(error.message.contains("unknown in 'locale'; did you mean 'local'?"), "\(error.message)")
        let wrongType = try #require(
            ScenarioParsing.error(
                """
                name: Containers
                devices: [{name: iPad}]
                steps:
                  - import: {device: iPad, document: Diary, text: "x", in: local}
                """))
        #expect(wrongType.line == 4, "import takes no container: \(wrongType.message)")
    }

    @Test func aDocumentCreatedInLocalStaysOnItsDevice() async throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Kept on the iPad
                devices: [{name: iPad}, {name: Mac}]
                steps:
                  - create: {device: iPad, document: Diary, text: "mine", in: local}
                  - create: {device: iPad, document: Notes, text: "ours"}
                  - sync: all
                  - expect: {device: Mac, document: Diary, exists: false}
                  - expect: {device: Mac, document: Notes, text: "ours"}
                  - expect: {converged: true, lostChanges: 0}
                  - move: {device: iPad, document: Diary, to: shared}
                  - sync: all
                  - expect: {document: Diary, text: "mine"}
                  - expect: {converged: true, lostChanges: 0}
                """, file: "kept.yaml")
        let result = await Simulator().run(scenario)
        #expect(result.passed, "\(result.failures.map(\.description))")
    }
}
