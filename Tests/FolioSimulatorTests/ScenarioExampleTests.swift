import FolioModels
import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// A scenario that uses every top-level key, every network key, every step of the core set and every operation of
/// the scenario format (`docs/scenarios.md`), annotated with comments as a file may be, reads to the expected
/// scenario.
@Suite(.workPool) struct ScenarioExampleTests {
    static let yaml = """
        name: Two devices edit a note offline        # required
        description: Free text shown in reports.
        seed: 7                                      # default 1; every random choice derives from it
        model: text                                  # default model for `create`: text | records | pages
        strategy: askUser                            # conflict strategy: askUser | latestWins | merge | keepBoth
        devices:                                     # required, at least one, names unique
          - name: iPad
          - name: Mac
            clockSkew: -90s                          # the device's wall clock is off by this much
          - name: Phone
        network:                                     # optional; defaults are a perfect link
          latency: 200ms                             # one-way, to and from the cloud
          loss: 0.1                                  # probability that a message is dropped (it is retried)
          duplicate: 0.05                            # probability that a message is delivered twice
          reorder: 0.2                               # probability that a message overtakes an earlier one
        steps:                                       # required; run in order
          - create: {device: iPad, document: Notes, text: "Hello"}
          - create: {device: Mac, document: Groceries, model: records, records: {r1: {name: Ann}}}
          - create: {device: Phone, document: Book, model: pages, pages: {text: "...", images: {cover.png: 1024}}}
          - sync: all
          - offline: [iPad]
          - edit: {device: iPad, document: Notes, insert: {at: 5, text: " world"}}
          - edit: {device: iPad, document: Notes, delete: {at: 0, count: 1}}
          - edit: {device: iPad, document: Notes, append: "text"}
          - edit: {device: Mac, document: Notes, replace: "whole text"}
          - edit: {device: Mac, document: Groceries, add: {record: r2, fields: {name: Ann}}}
          - edit: {device: Mac, document: Groceries, set: {record: r1, field: name, value: Bob}}
          - edit: {device: Mac, document: Groceries, remove: {record: r2}}
          - edit: {device: Phone, document: Book, setText: "..."}
          - edit: {device: Phone, document: Book, putImage: {name: back.png, bytes: 2048}}
          - edit: {device: Phone, document: Book, removeImage: {name: cover.png}}
          - undo: {device: Mac, document: Notes}
          - redo: {device: Mac, document: Notes}
          - save: {device: iPad, document: Notes}
          - wait: 30s
          - online: [iPad]
          - sync: [iPad, Mac]
          - expect:
              document: Notes            # the document the keys below speak of (by display name)
              device: Mac                # optional; default: every device
              state: inConflict          # normal | inConflict | closed | savingError
              conflictVersions: 2        # how many competing versions are surfaced
              text: "Hello world\\n"      # exact contents (text model)
              contains: "milk"           # substring (text model)
          - resolve: {device: Mac, document: Notes, choose: iPad}
          - partition: [[iPad], [Mac, Phone]]
          - heal: true
          - crash: {device: Mac, during: save}
          - crash: {device: iPad, during: append}
          - restart: {device: Mac}
          - restart: {device: iPad}
          - close: {device: Phone, document: Book}
          - open: {device: Phone, document: Book}
          - rename: {device: Phone, document: Book, to: Album}
          - delete: {device: Mac, document: Groceries}
          - sync: all
          - expect:
              document: Groceries
              records: {r1: {name: Ann}} # these records have at least these fields (records model)
          - expect:
              document: Album
              images: [cover.png]        # exactly these images (pages model)
          - expect:
              document: Groceries
              exists: false              # the document is absent (deleted) on the device
          - expect:
              converged: true            # every device that is online and not partitioned holds the same changes,
                                         # the same vectors and the same contents for every document
              lostChanges: 0             # no change that any device acknowledged is missing after a full sync
        """

    static let expected = Scenario(
        name: "Two devices edit a note offline",
        description: "Free text shown in reports.",
        seed: 7,
        model: .text,
        strategy: .askUser,
        devices: [
            .init(name: "iPad"),
            .init(name: "Mac", clockSkew: .seconds(-90)),
            .init(name: "Phone"),
        ],
        network: .init(latency: SimulatedDuration(milliseconds: 200), loss: 0.1, duplicate: 0.05, reorder: 0.2),
        steps: [
            .create(device: "iPad", document: "Notes", model: .text, contents: .text("Hello")),
            .create(
                device: "Mac", document: "Groceries", model: .records,
                contents: .records([RecordsDocument.Record(id: "r1", fields: ["name": "Ann"])])),
            .create(
                device: "Phone", document: "Book", model: .pages,
                contents: .pages(text: "...", images: ["cover.png": 1024])),
            .sync(.all),
            .offline(["iPad"]),
            .edit(device: "iPad", document: "Notes", operation: .insert(at: 5, text: " world")),
            .edit(device: "iPad", document: "Notes", operation: .delete(at: 0, count: 1)),
            .edit(device: "iPad", document: "Notes", operation: .append("text")),
            .edit(device: "Mac", document: "Notes", operation: .replace("whole text")),
            .edit(device: "Mac", document: "Groceries", operation: .add(record: "r2", fields: ["name": "Ann"])),
            .edit(device: "Mac", document: "Groceries", operation: .set(record: "r1", field: "name", value: "Bob")),
            .edit(device: "Mac", document: "Groceries", operation: .remove(record: "r2")),
            .edit(device: "Phone", document: "Book", operation: .setText("...")),
            .edit(device: "Phone", document: "Book", operation: .putImage(name: "back.png", bytes: 2048)),
            .edit(device: "Phone", document: "Book", operation: .removeImage(name: "cover.png")),
            .undo(device: "Mac", document: "Notes"),
            .redo(device: "Mac", document: "Notes"),
            .save(device: "iPad", document: "Notes"),
            .wait(.seconds(30)),
            .online(["iPad"]),
            .sync(.devices(["iPad", "Mac"])),
            .expect(
                .init(
                    document: "Notes", device: "Mac", state: .inConflict, conflictVersions: 2,
                    text: "Hello world\n", contains: "milk")),
            .resolve(device: "Mac", document: "Notes", choose: .device("iPad")),
            .partition([["iPad"], ["Mac", "Phone"]]),
            .heal,
            .crash(device: "Mac", during: .save),
            .crash(device: "iPad", during: .append),
            .restart(device: "Mac"),
            .restart(device: "iPad"),
            .close(device: "Phone", document: "Book"),
            .open(device: "Phone", document: "Book"),
            .rename(device: "Phone", document: "Book", to: "Album"),
            .delete(device: "Mac", document: "Groceries"),
            .sync(.all),
            .expect(.init(document: "Groceries", records: ["r1": ["name": "Ann"]])),
            .expect(.init(document: "Album", images: ["cover.png"])),
            .expect(.init(document: "Groceries", exists: false)),
            .expect(.init(converged: true, lostChanges: 0)),
        ].map { Scenario.Step($0) })

    @Test func exampleReadsToTheExpectedScenario() throws {
        let scenario = try ScenarioParser.parse(yaml: Self.yaml, file: "example.yaml")
        #expect(scenario == Self.expected)
        // Field by field too, so a difference is easy to read.
        #expect(scenario.devices == Self.expected.devices)
        #expect(scenario.network == Self.expected.network)
        for (step, expected) in zip(scenario.steps, Self.expected.steps) {
            #expect(step.action == expected.action, "line \(step.line)")
        }
    }

    @Test func stepsKnowTheirLines() throws {
        let scenario = try ScenarioParser.parse(yaml: Self.yaml, file: "example.yaml")
        let lines = Self.yaml.split(separator: "\n", omittingEmptySubsequences: false)
        for step in scenario.steps {
            #expect(lines[step.line - 1].hasPrefix("  - \(step.action.key):"), "line \(step.line)")
        }
        #expect(scenario.steps.first?.line == 17)
        #expect(scenario.steps.last?.line == 66)
    }

    @Test func defaultsApplyWhenKeysAreLeftOut() throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Smallest
                devices:
                  - name: iPad
                steps:
                  - wait: 1s
                """, file: "small.yaml")
        #expect(
            scenario == Scenario(name: "Smallest", devices: [.init(name: "iPad")], steps: [.init(.wait(.seconds(1)))]))
        #expect(scenario.seed == 1)
        #expect(scenario.model == .text)
        #expect(scenario.strategy == .askUser)
        #expect(scenario.network == .perfect)
        #expect(scenario.description == nil)
    }

    @Test func readsFileBytes() throws {
        let scenario = try ScenarioParser.parse(data: Data(Self.yaml.utf8), file: "example.yaml")
        #expect(scenario == Self.expected)
    }
}
