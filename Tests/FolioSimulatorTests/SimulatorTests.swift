import FolioCore
import FolioSimulator
import Foundation
import Testing

@Suite struct SimulatorTests {
    func parse(_ steps: String, strategy: String = "askUser", devices: String = "[{name: iPad}, {name: Mac}]") throws
        -> Scenario
    {
        try ScenarioParser.parse(
            yaml: """
                name: Test
                strategy: \(strategy)
                devices: \(devices)
                steps:
                \(steps)
                """, file: "test.yaml")
    }

    @Test func aFailedExpectationNamesItsStepLineAndWhatWasFound() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - expect: {document: Notes, device: iPad, text: "b"}
              - expect: {document: Notes, device: iPad, text: "a"}
            """)
        let result = await Simulator().run(scenario)
        #expect(!result.passed)
        #expect(result.failures.count == 1)
        let failure = try #require(result.failures.first)
        #expect(failure.kind == .expectation)
        #expect(failure.step == 2)
        #expect(failure.line == 6)
        #expect(failure.message.contains("expected Notes text: \"b\", found \"a\""))
        #expect(result.steps.count == 3, "an expectation failure does not stop the run")
    }

    /// A failed `converged` names devices and the document as the scenario does, not by their identities.
    @Test func aConvergenceFailureSpeaksOfNames() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - expect: {converged: true}
            """)
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(
            failure.message.hasSuffix(
                #"found iPad and Mac hold different changes of document "Notes": [iPad: 2] vs none"#),
            "\(failure.message)")
    }

    /// A rename that gives a text document the name of a records document: an edit of records through that name
    /// now reaches the text document, and the step fails saying so (it used to stop the process).
    @Test func anEditOfAnotherModelThroughARenamedNameFailsItsStep() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - create: {device: iPad, document: List, model: records}
              - rename: {device: iPad, document: Notes, to: List}
              - edit: {device: iPad, document: List, set: {record: r1, field: name, value: Ann}}
            """)
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(failure.step == 4)
        #expect(
            failure.message.contains(
                "List on iPad is a text document now (a rename gave it the name); set edits records documents"),
            "\(failure.message)")
    }

    /// The same through a rename that gives a text document's name to a records document: the failed step names both
    /// models `insert` edits.
    @Test func anInsertThroughANameRenamedToRecordsFailsItsStep() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - create: {device: iPad, document: List, model: records}
              - rename: {device: iPad, document: List, to: Notes}
              - edit: {device: iPad, document: Notes, insert: {at: 0, text: "x"}}
            """)
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(failure.step == 4)
        #expect(
            failure.message.contains(
                "Notes on iPad is a records document now (a rename gave it the name); insert edits text and pages "
                    + "documents"),
            "\(failure.message)")
    }

    /// `insert` and `delete` on a pages document edit its text (positions in Unicode scalars), undo as one edit each,
    /// sync, and leave the images alone; one past the end fails its step with the model's reason.
    @Test func pagesInsertAndDeleteEditTheTextAndSync() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Trip, pages: {text: "Day 1\\nDay 2\\n", images: {cover.png: 16}}}
              - edit: {device: iPad, document: Trip, insert: {at: 6, text: "Day 1½ 🏖️\\n"}}
              - edit: {device: iPad, document: Trip, delete: {at: 0, count: 6}}
              - undo: {device: iPad, document: Trip}
              - edit: {device: iPad, document: Trip, delete: {at: 12, count: 3}}
              - sync: all
              - expect: {converged: true, document: Trip, images: [cover.png]}
              - edit: {device: Mac, document: Trip, insert: {at: 99, text: "x"}}
            """)
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(result.failures.count == 1, "\(result.failures)")
        #expect(failure.kind == .step)
        #expect(failure.step == 8)
        #expect(failure.message.contains("cannot insert at 99: the text has 19 scalars"), "\(failure.message)")
        let document = try #require(result.report.documents.first)
        #expect(document.devices.count == 2)
        for device in document.devices {
            #expect(device.contents.prefix(3) == ["Day 1", "Day 1½", "Day 2"], "\(device.device)")
            #expect(device.contents.count == 4 && device.contents[3].hasPrefix("images/cover.png: 16 bytes"))
        }
    }

    /// Another program can only change a file the device wrote: before the device saves the document there is
    /// none, and the step says so (the run stops there); after, the app takes the change in at its next save.
    @Test func anotherProgramChangesOnlyAFileTheDeviceSaved() async throws {
        let unsaved = try parse(
            """
              - create: {device: iPad, document: Notes, text: "mine\\n"}
              - writeFile: {device: iPad, document: Notes, text: "theirs\\n"}
            """)
        let refused = await Simulator().run(unsaved)
        let failure = try #require(refused.failures.first)
        #expect(failure.kind == .step && failure.step == 2)
        #expect(
            failure.message.contains(
                "iPad has never saved Notes, so it has no file for another program to change; save it there first"),
            "\(failure.message)")

        let saved = try parse(
            """
              - create: {device: iPad, document: Notes, text: "mine\\n"}
              - save: {device: iPad, document: Notes}
              - writeFile: {device: iPad, document: Notes, text: "theirs\\n"}
              - save: {device: iPad, document: Notes}
              - expect: {device: iPad, document: Notes, conflictVersions: 0, text: "theirs\\n"}
            """)
        let result = await Simulator().run(saved)
        #expect(result.failures.isEmpty, "\(result.failures.map(\.message))")
    }

    /// A network that drops every message keeps a sync from settling; the failure blames the network, not devices.
    @Test func aSyncThatNeverSettlesOnALosingNetworkSaysSo() async throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Test
                network: {loss: 1}
                devices: [{name: iPad}, {name: Mac}]
                steps:
                  - create: {device: iPad, document: Notes, text: "a"}
                  - sync: all
                """, file: "test.yaml")
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(failure.step == 2)
        #expect(
            failure.message.contains(
                "sync did not settle after 50 rounds: the network still lost messages in the "
                    + "last round (loss: 1.0); with a lower loss, retries get through"), "\(failure.message)")
    }

    /// The device that resolves with `keepBoth` holds the copy it made at once, as the others do once it arrives.
    @Test func theDeviceThatKeepsBothSeesItsCopy() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "one"}
              - sync: all
              - offline: [iPad, Mac]
              - edit: {device: iPad, document: Notes, replace: "iPad"}
              - edit: {device: Mac, document: Notes, replace: "Mac"}
              - online: [iPad, Mac]
              - sync: all
              - resolve: {device: Mac, document: Notes, choose: keepBoth}
              - expect: {device: Mac, document: "Notes (conflict from Mac)", exists: true, text: "Mac"}
              - expect: {device: Mac, document: Notes, state: normal, text: "iPad"}
              - sync: all
              - expect: {document: "Notes (conflict from Mac)", text: "Mac"}
              - expect: {converged: true, lostChanges: 0}
            """)
        let result = await Simulator().run(scenario)
        #expect(result.failures.isEmpty, "\(result.failures)")
        #expect(result.steps[7].events.contains("Mac opened Notes (conflict from Mac)"), "\(result.steps[7].events)")
    }

    /// `text` is the exact contents and `contains` a substring, both by Unicode scalars as positions count: a
    /// decomposed "é" (e + U+0301) is not the precomposed one, and holds a plain "e".
    @Test func textExpectationsCompareUnicodeScalars() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "cafe\\u0301 x"}
              - expect: {document: Notes, device: iPad, text: "cafe\\u0301 x", contains: "e"}
              - expect: {document: Notes, device: iPad, contains: "e\\u0301 "}
              - expect: {document: Notes, device: iPad, text: "caf\\u00e9 x"}
              - expect: {document: Notes, device: iPad, contains: "caf\\u00e9"}
            """)
        let result = await Simulator().run(scenario)
        #expect(result.failures.map(\.step) == [4, 5], "\(result.failures)")
        let messages = result.failures.map(\.message)
        #expect(
            messages.first?.contains(
                #"found "café x" (other Unicode scalars: U+0063 U+0061 U+0066 U+0065 U+0301 U+0020 U+0078; expected U+0063 U+0061 U+0066 U+00E9 U+0020 U+0078)"#
            ) == true, "\(messages)")
        #expect(messages.last?.contains("expected Notes contains: \"café\"") == true, "\(messages)")
    }

    @Test func aStepThatCannotBeDoneStopsTheRun() async throws {
        // Built as a value: a scenario file with this step is refused before it runs (ScenarioErrorTests).
        var scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - crash: {device: iPad}
            """)
        scenario.steps += [
            Scenario.Step(.edit(device: "iPad", document: "Notes", operation: .append("b"))),
            Scenario.Step(.restart(device: "iPad")),
        ]
        let result = await Simulator().run(scenario)
        let failure = try #require(result.failures.first)
        #expect(failure.kind == .step)
        #expect(failure.step == 3)
        #expect(failure.message.contains("iPad is not running"))
        #expect(result.steps.count == 3)
    }

    @Test func aDeviceWithoutTheDocumentYetSaysSo() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes}
              - edit: {device: Mac, document: Notes, append: "b"}
            """)
        let result = await Simulator().run(scenario)
        #expect(result.failures.first?.message.contains("Mac does not have Notes yet") == true)
    }

    @Test func aRunIsReproducedByItsSeed() async throws {
        let file = ScenarioReplayTests.scenarios.appendingPathComponent("11-bad-network.yaml")
        let scenario = try ScenarioParser.parse(data: try Data(contentsOf: file), file: "11-bad-network.yaml")
        let first = await Simulator().run(scenario)
        let second = await Simulator().run(scenario)
        #expect(first.passed && second.passed)
        #expect(first.report.json() == second.report.json())
        #expect(first.report.html() == second.report.html())
        var other = scenario
        other.seed += 1
        let third = await Simulator().run(other)
        #expect(third.report.json() != first.report.json(), "another seed makes other identities and faults")
    }

    @Test func aCrashDuringSaveLosesNothingAndLeavesNoLeftovers() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-sim-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        for seed in 1...6 {
            var scenario = try parse(
                """
                  - create: {device: iPad, document: Notes, text: "one"}
                  - save: {device: iPad, document: Notes}
                  - edit: {device: iPad, document: Notes, append: " two"}
                  - crash: {device: iPad, during: save}
                  - restart: {device: iPad}
                  - expect: {document: Notes, device: iPad, text: "one two", state: normal}
                  - save: {device: iPad, document: Notes}
                """)
            scenario.seed = UInt64(seed)
            let result = await Simulator(workDirectory: directory, keepsFiles: true).run(scenario)
            #expect(result.passed, "seed \(seed): \(result.failures)")
            #expect(
                result.steps[3].events.contains {
                    $0.contains("crashed while saving Notes") || $0.contains("saved Notes before")
                })
        }
        let leftovers =
            FileManager.default.enumerator(atPath: directory.path)?.allObjects
            .compactMap { $0 as? String }.filter { $0.contains(".folio-tmp") || $0.contains(".folio-staging") } ?? []
        #expect(leftovers.isEmpty, "leftovers: \(leftovers)")
    }

    @Test func offlineDevicesDoNotSyncAndPartitionsKeepGroupsApart() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - offline: [Mac]
              - sync: all
              - expect: {document: Notes, device: Mac, exists: false}
              - expect: {document: Notes, device: Phone, text: "a"}
              - online: [Mac]
              - partition: [[iPad], [Mac, Phone]]
              - edit: {device: iPad, document: Notes, append: "b"}
              - sync: all
              - expect: {document: Notes, device: Mac, text: "a"}
              - expect: {document: Notes, device: Phone, text: "a"}
              - expect: {converged: true}
              - heal: true
              - sync: all
              - expect: {document: Notes, text: "ab", converged: true, lostChanges: 0}
            """, devices: "[{name: iPad}, {name: Mac}, {name: Phone}]")
        let passed = await Simulator().run(scenario).failures.map(\.description)
        #expect(passed.isEmpty)
    }

    @Test func convergedFalseIsCheckedToo() async throws {
        let scenario = try parse(
            """
              - create: {device: iPad, document: Notes, text: "a"}
              - expect: {converged: false}
              - sync: all
              - expect: {converged: false}
            """)
        let result = await Simulator().run(scenario)
        #expect(result.failures.map(\.step) == [4])
    }
}
