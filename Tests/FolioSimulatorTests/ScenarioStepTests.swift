import FolioModels
import FolioSimulator
import FolioTestWorkPool
import Testing

/// Every step key of the scenario format (`docs/scenarios.md`), in the flow style and where it matters in the block
/// style, reads to the action it means, on the line it was written.
@Suite(.workPool) struct ScenarioStepTests {
    typealias Action = Scenario.Action

    static let cases: [(step: String, action: Action)] = [
        // create
        (
            "create: {device: Mac, document: Plan}",
            .create(device: "Mac", document: "Plan", model: .text, contents: nil)
        ),
        (
            "create: {device: Mac, document: Plan, model: text, text: \"Hello\\n\"}",
            .create(device: "Mac", document: "Plan", model: .text, contents: .text("Hello\n"))
        ),
        (
            "create: {device: Mac, document: Plan, model: records}",
            .create(device: "Mac", document: "Plan", model: .records, contents: nil)
        ),
        (
            "create: {device: Mac, document: Plan, records: {r2: {name: Ann, city: Oslo}, r1: {}, r0: ~}}",
            .create(
                device: "Mac", document: "Plan", model: .records,
                contents: .records([
                    RecordsDocument.Record(id: "r2", fields: ["name": "Ann", "city": "Oslo"]),
                    RecordsDocument.Record(id: "r1"), RecordsDocument.Record(id: "r0"),
                ]))
        ),
        (
            "create: {device: Mac, document: Plan, model: pages, pages: {text: \"Hi\", images: {cover.png: 1024, b.jpg: 0}}}",
            .create(
                device: "Mac", document: "Plan", model: .pages,
                contents: .pages(text: "Hi", images: ["cover.png": 1024, "b.jpg": 0]))
        ),
        (
            "create: {device: Mac, document: Plan, pages: {}}",
            .create(device: "Mac", document: "Plan", model: .pages, contents: .pages(text: "", images: [:]))
        ),
        // edit: text
        (
            "edit: {device: iPad, document: Notes, insert: {at: 3, text: \"abc\"}}",
            .edit(device: "iPad", document: "Notes", operation: .insert(at: 3, text: "abc"))
        ),
        (
            "edit: {device: iPad, document: Notes, delete: {at: 0, count: 2}}",
            .edit(device: "iPad", document: "Notes", operation: .delete(at: 0, count: 2))
        ),
        (
            "edit: {device: iPad, document: Notes, append: \"milk\\n\"}",
            .edit(device: "iPad", document: "Notes", operation: .append("milk\n"))
        ),
        (
            "edit: {device: iPad, document: Notes, replace: \"whole text\"}",
            .edit(device: "iPad", document: "Notes", operation: .replace("whole text"))
        ),
        // edit: records
        (
            "edit: {device: Mac, document: List, add: {record: r1, fields: {name: Ann}}}",
            .edit(device: "Mac", document: "List", operation: .add(record: "r1", fields: ["name": "Ann"]))
        ),
        (
            "edit: {device: Mac, document: List, add: {record: r1}}",
            .edit(device: "Mac", document: "List", operation: .add(record: "r1", fields: [:]))
        ),
        (
            "edit: {device: Mac, document: List, set: {record: r1, field: name, value: Bob}}",
            .edit(device: "Mac", document: "List", operation: .set(record: "r1", field: "name", value: "Bob"))
        ),
        (
            "edit: {device: Mac, document: List, remove: {record: r1}}",
            .edit(device: "Mac", document: "List", operation: .remove(record: "r1"))
        ),
        // edit: pages
        (
            "edit: {device: Phone, document: Album, insert: {at: 3, text: \"abc\"}}",
            .edit(device: "Phone", document: "Album", operation: .insert(at: 3, text: "abc"))
        ),
        (
            "edit: {device: Phone, document: Album, delete: {at: 0, count: 2}}",
            .edit(device: "Phone", document: "Album", operation: .delete(at: 0, count: 2))
        ),
        (
            "edit: {device: Phone, document: Album, setText: \"Chapter 1\"}",
            .edit(device: "Phone", document: "Album", operation: .setText("Chapter 1"))
        ),
        (
            "edit: {device: Phone, document: Album, putImage: {name: cover.png, bytes: 1024}}",
            .edit(device: "Phone", document: "Album", operation: .putImage(name: "cover.png", bytes: 1024))
        ),
        (
            "edit: {device: Phone, document: Album, removeImage: {name: cover.png}}",
            .edit(device: "Phone", document: "Album", operation: .removeImage(name: "cover.png"))
        ),
        // lifecycle
        ("undo: {device: iPad, document: Notes}", .undo(device: "iPad", document: "Notes")),
        ("redo: {device: iPad, document: Notes}", .redo(device: "iPad", document: "Notes")),
        ("save: {device: iPad, document: Notes}", .save(device: "iPad", document: "Notes")),
        ("close: {device: iPad, document: Notes}", .close(device: "iPad", document: "Notes")),
        ("open: {device: Mac, document: Notes}", .open(device: "Mac", document: "Notes")),
        (
            "rename: {device: iPad, document: Notes, to: Groceries}",
            .rename(device: "iPad", document: "Notes", to: "Groceries")
        ),
        ("delete: {device: iPad, document: Notes}", .delete(device: "iPad", document: "Notes")),
        ("move: {device: iPad, document: Notes, to: shared}", .move(device: "iPad", document: "Notes", to: .shared)),
        (
            "writeFile: {device: Mac, document: Notes, text: \"theirs\"}",
            .writeFile(device: "Mac", document: "Notes", contents: .text("theirs"))
        ),
        (
            "import: {device: iPad, document: Inbox, records: {r1: {title: Bill}}}",
            .importFile(
                device: "iPad", document: "Inbox", model: .records,
                contents: .records([RecordsDocument.Record(id: "r1", fields: ["title": "Bill"])]))
        ),
        // network
        ("sync: all", .sync(.all)),
        ("sync: [iPad, Mac]", .sync(.devices(["iPad", "Mac"]))),
        ("offline: [iPad]", .offline(["iPad"])),
        ("online: [iPad, Phone]", .online(["iPad", "Phone"])),
        ("partition: [[iPad], [Mac, Phone]]", .partition([["iPad"], ["Mac", "Phone"]])),
        ("partition: [[iPad]]", .partition([["iPad"]])),
        ("heal: true", .heal),
        // time and faults
        ("wait: 30s", .wait(.seconds(30))),
        ("wait: 250ms", .wait(SimulatedDuration(milliseconds: 250))),
        ("wait: 5m", .wait(.seconds(300))),
        ("wait: 2h", .wait(.seconds(7200))),
        ("wait: 0s", .wait(.zero)),
        ("crash: {device: iPad}", .crash(device: "iPad", during: nil)),
        ("crash: {device: iPad, during: save}", .crash(device: "iPad", during: .save)),
        ("crash: {device: iPad, during: append}", .crash(device: "iPad", during: .append)),
        ("restart: {device: iPad}", .restart(device: "iPad")),
        // resolve
        (
            "resolve: {device: iPad, document: Notes, choose: Mac}",
            .resolve(device: "iPad", document: "Notes", choose: .device("Mac"))
        ),
        (
            "resolve: {device: iPad, document: Notes, choose: latest}",
            .resolve(device: "iPad", document: "Notes", choose: .latest)
        ),
        (
            "resolve: {device: iPad, document: Notes, choose: merge}",
            .resolve(device: "iPad", document: "Notes", choose: .merge)
        ),
        (
            "resolve: {device: iPad, document: Notes, choose: keepBoth}",
            .resolve(device: "iPad", document: "Notes", choose: .keepBoth)
        ),
        (
            "restore: {device: iPad, document: Notes, version: 2}",
            .restore(device: "iPad", document: "Notes", version: .number(2))
        ),
        (
            "restore: {device: iPad, document: Notes, at: 90s}",
            .restore(device: "iPad", document: "Notes", version: .at(.seconds(90)))
        ),
        (
            "markVersion: {device: iPad, document: Notes, name: Sent to editor}",
            .markVersion(device: "iPad", document: "Notes", name: "Sent to editor")
        ),
    ]

    @Test(arguments: cases)
    func stepReadsToItsAction(step: String, action: Action) throws {
        // A restart brings back a crashed device: the device crashes first.
        let before = action.key == "restart" ? ["  - crash: {device: iPad}"] : []
        let steps = (before + ["  - " + step]).joined(separator: "\n")
        let scenario = try ScenarioParser.parse(yaml: ScenarioParsing.withDocuments(steps), file: "steps.yaml")
        try #require(scenario.steps.count == 4 + before.count)
        let read = scenario.steps[3 + before.count]
        #expect(read.action == action)
        #expect(read.line == 10 + before.count)
        #expect(read.action.key == String(step.prefix { $0 != ":" }))
        #expect(
            try ScenarioParser.parse(yaml: scenario.yaml, file: "written.yaml") == scenario, "the writer writes it back"
        )
    }

    @Test func everyActionKeyIsCovered() {
        let covered = Set(Self.cases.map(\.action.key) + ["expect"])
        #expect(covered == Set(Action.keys))
        let operations = Set(
            Self.cases.compactMap { if case .edit(_, _, let operation) = $0.action { operation.key } else { nil } })
        #expect(operations == Set(Scenario.Model.allCases.flatMap(Scenario.Operation.keys(of:))))
    }

    @Test func blockStyleStepsReadTheSameAsFlowStyle() throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments(
                """
                  - edit:
                      device: iPad
                      document: Notes
                      insert:
                        at: 0
                        text: |
                          two
                          lines
                  - sync:
                      - iPad
                      - Mac
                  - partition:
                      - [iPad]
                      - - Mac
                        - Phone
                  - crash:
                      device: iPad
                      during: append
                """), file: "block.yaml")
        #expect(
            scenario.steps.dropFirst(3).map(\.action) == [
                .edit(device: "iPad", document: "Notes", operation: .insert(at: 0, text: "two\nlines\n")),
                .sync(.devices(["iPad", "Mac"])),
                .partition([["iPad"], ["Mac", "Phone"]]),
                .crash(device: "iPad", during: .append),
            ])
        #expect(scenario.steps.map(\.line) == [7, 8, 9, 10, 18, 21, 25])
    }

    @Test func createUsesTheScenarioDefaultModel() throws {
        let scenario = try ScenarioParser.parse(
            yaml: """
                name: Default model
                model: pages
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Album}
                  - edit: {device: iPad, document: Album, putImage: {name: a.png, bytes: 3}}
                  - create: {device: iPad, document: Notes, text: "x"}
                  - edit: {device: iPad, document: Notes, append: "y"}
                """, file: "default.yaml")
        #expect(scenario.steps[0].action == .create(device: "iPad", document: "Album", model: .pages, contents: nil))
        #expect(
            scenario.steps[2].action == .create(device: "iPad", document: "Notes", model: .text, contents: .text("x")))
    }

    @Test func renamedDocumentsKeepTheirModel() throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments(
                """
                  - rename: {device: iPad, document: List, to: Groceries}
                  - edit: {device: Mac, document: Groceries, add: {record: r1, fields: {item: milk}}}
                  - edit: {device: Mac, document: List, remove: {record: r1}}
                """), file: "rename.yaml")
        #expect(scenario.steps.count == 6)
    }

    @Test func keepBothCopiesAreKnownByTheirConflictName() throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments(
                """
                  - resolve: {device: iPad, document: Notes, choose: keepBoth}
                  - expect: {document: "Notes (conflict from Mac)", contains: "milk"}
                  - edit: {device: Mac, document: "Notes (conflict from Mac)", append: "!"}
                """), file: "keepBoth.yaml")
        #expect(scenario.steps[4].action == .expect(.init(document: "Notes (conflict from Mac)", contains: "milk")))
    }

    @Test func textValuesAreReadAsWritten() throws {
        let scenario = try ScenarioParser.parse(
            yaml: ScenarioParsing.withDocuments(
                """
                  - edit: {device: iPad, document: Notes, append: 007}
                  - edit: {device: iPad, document: Notes, append: yes}
                  - edit: {device: iPad, document: Notes, append: ""}
                  - edit: {device: iPad, document: Notes, append: "e\\u0301 \\t\\"q\\" \\\\"}
                  - edit: {device: iPad, document: Notes, append: '#1: it''s'}
                """), file: "text.yaml")
        let texts = scenario.steps.dropFirst(3).map { step -> String? in
            guard case .edit(_, _, .append(let text)) = step.action else { return nil }
            return text
        }
        #expect(texts == ["007", "yes", "", "e\u{301} \t\"q\" \\", "#1: it's"])
    }
}
