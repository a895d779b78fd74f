import FolioCore
import FolioSimulator
import FolioTestWorkPool
import FolioTesting
import Testing

/// The canonical writer: deterministic, readable, and read back to the same scenario.
@Suite(.workPool) struct ScenarioYAMLTests {
    @Test func writesTheCanonicalForm() throws {
        let scenario = Scenario(
            name: "Offline: two devices",
            description: "Line one\nline two",
            seed: 7,
            model: .text,
            strategy: .merge,
            devices: [.init(name: "iPad"), .init(name: "Mac", clockSkew: .seconds(-90))],
            network: .init(latency: SimulatedDuration(milliseconds: 200), loss: 0.1),
            steps: [
                .create(device: "iPad", document: "Notes", model: .text, contents: .text("Hello")),
                .create(
                    device: "Mac", document: "List", model: .records,
                    contents: .records([.init(id: "r2", fields: ["b": "2", "a": "yes"]), .init(id: "r1")])),
                .edit(device: "iPad", document: "Notes", operation: .insert(at: 5, text: " world")),
                .sync(.all),
                .partition([["iPad"], ["Mac"]]),
                .wait(.seconds(90)),
                .resolve(device: "Mac", document: "Notes", choose: .keepBoth),
                .expect(.init(document: "List", records: ["r2": ["b": "2"], "r1": [:]], exists: true)),
                .expect(.init(converged: true, lostChanges: 0)),
            ].map { Scenario.Step($0) })
        #expect(
            scenario.yaml == """
                name: "Offline: two devices"
                description: "Line one\\nline two"
                seed: 7
                model: text
                strategy: merge
                devices:
                  - name: iPad
                  - name: Mac
                    clockSkew: -90s
                network:
                  latency: 200ms
                  loss: 0.1
                  duplicate: 0.0
                  reorder: 0.0
                steps:
                  - create: {device: iPad, document: Notes, text: Hello}
                  - create: {device: Mac, document: List, model: records, records: {r2: {a: "yes", b: "2"}, r1: {}}}
                  - edit: {device: iPad, document: Notes, insert: {at: 5, text: " world"}}
                  - sync: all
                  - partition: [[iPad], [Mac]]
                  - wait: 90s
                  - resolve: {device: Mac, document: Notes, choose: keepBoth}
                  - expect: {document: List, records: {r1: {}, r2: {b: "2"}}, exists: true}
                  - expect: {converged: true, lostChanges: 0}

                """)
        let parsed = try ScenarioParser.parse(yaml: scenario.yaml, file: "canonical.yaml")
        #expect(parsed == scenario)
        #expect(parsed.steps.map(\.line) == Array(16...24))
    }

    @Test func awkwardTextsSurviveTheRoundTrip() throws {
        let names = AwkwardScenarioGenerator.awkward.filter { !$0.isEmpty }
        let scenario = Scenario(
            name: "Awkward",
            devices: [.init(name: "iPad")],
            steps: [Scenario.Step(.create(device: "iPad", document: "Notes", model: .text, contents: nil))]
                + AwkwardScenarioGenerator.awkward.map {
                    Scenario.Step(.edit(device: "iPad", document: "Notes", operation: .append($0)))
                }
                + names.map { Scenario.Step(.rename(device: "iPad", document: "Notes", to: $0)) })
        let parsed = try ScenarioParser.parse(yaml: scenario.yaml, file: "awkward.yaml")
        #expect(parsed == scenario)
        for (written, read) in zip(scenario.steps, parsed.steps) {
            guard case .edit(_, _, .append(let expected)) = written.action,
                case .edit(_, _, .append(let actual)) = read.action
            else { continue }
            #expect(Array(actual.unicodeScalars) == Array(expected.unicodeScalars), "\(expected.debugDescription)")
        }
    }

    @Test func randomScenariosSurviveTheRoundTrip() throws {
        let seed = TestSeed.make()
        var generator = AwkwardScenarioGenerator(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<300 where !check.shouldStop {
            check.iteration = iteration
            let scenario = generator.scenario()
            let yaml = scenario.yaml
            do {
                let parsed = try ScenarioParser.parse(yaml: yaml, file: "random.yaml")
                check.expect(parsed == scenario, "the scenario read back differs:\n\(yaml)")
                // Byte for byte: catches texts that differ only in Unicode normalization, which `==` ignores.
                check.expect(parsed.yaml == yaml, "writing it again gives other bytes:\n\(yaml)\n\(parsed.yaml)")
                let firstStepLine = yaml.split(separator: "\n").firstIndex(of: "steps:")! + 2
                check.expect(
                    parsed.steps.map(\.line) == Array(firstStepLine..<(firstStepLine + scenario.steps.count)),
                    "steps are not one per line")
            } catch {
                check.expect(false, "the writer's output does not parse: \(error)\n\(yaml)")
            }
        }
    }

    @Test func writingIsDeterministic() {
        let seed = TestSeed.make()
        var first = AwkwardScenarioGenerator(seed: seed)
        var second = AwkwardScenarioGenerator(seed: seed)
        for _ in 0..<20 {
            #expect(first.scenario().yaml == second.scenario().yaml, "seed \(seed)")
        }
    }
}

extension ScenarioYAMLTests {
    /// Yams decodes each scalar with Foundation, which drops a byte order mark at the start of a string; the reader
    /// puts it back, so texts that start with U+FEFF survive the round trip too.
    @Test func aLeadingByteOrderMarkSurvives() throws {
        for text in ["\u{FEFF}", "\u{FEFF}a\u{FEFF}b", "\u{FEFF}\u{FEFF}", "a\u{FEFF}"] {
            let scenario = Scenario(
                name: text, devices: [.init(name: "iPad" + text)],
                steps: [.init(.create(device: "iPad" + text, document: text, model: .text, contents: .text(text)))])
            let parsed = try ScenarioParser.parse(yaml: scenario.yaml, file: "bom.yaml")
            #expect(parsed == scenario)
            #expect(Array(parsed.name.unicodeScalars) == Array(text.unicodeScalars))
        }
        let spelled = try ScenarioParser.parse(
            yaml: "name: \"\\ufeffx\"\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n", file: "bom.yaml")
        #expect(spelled.name == "\u{FEFF}x")
    }
}
