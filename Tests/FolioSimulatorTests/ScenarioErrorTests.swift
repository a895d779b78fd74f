import FolioSimulator
import FolioTestWorkPool
import Foundation
import Testing

/// Every kind of bad input is refused with its line and a message that says what to write instead.
@Suite(.workPool) struct ScenarioErrorTests {
    typealias Code = ScenarioErrorCode

    // MARK: Malformed YAML

    @Test func malformedYAMLNamesYamsPosition() throws {
        let error = try #require(
            ScenarioParsing.error(
                """
                name: Broken
                devices:
                  - name: iPad
                steps:
                  - edit: {device: iPad, document: Notes, append: "unclosed}
                """))
        #expect(error.code == .malformedYAML)
        #expect(error.line == 5 || error.line == 6)
        #expect(error.message.contains("close the quote"))
        #expect(
            error.description.hasPrefix("test.yaml:\(error.line):\(error.column): error: the file is not valid YAML"))
    }

    @Test func unquotedColonSaysToQuote() throws {
        let error = try #require(
            ScenarioParsing.error("name: Notes: a story\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n"))
        #expect(error.code == .malformedYAML)
        #expect(error.line == 1)
        #expect(error.column == 12)
        #expect(error.message.contains("quote a value that contains ': '"))
    }

    @Test func tabsSayToIndentWithSpaces() throws {
        let error = try #require(ScenarioParsing.error("name: Tabs\ndevices:\n\t- name: iPad\nsteps: [{sync: all}]\n"))
        #expect(error.code == .malformedYAML)
        #expect(error.line == 3)
        #expect(error.message.contains("indent with spaces, not tabs"))
    }

    @Test func valueStartingWithADashSaysToQuote() throws {
        let error = try #require(
            ScenarioParsing.error(
                """
                name: Dash
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Notes}
                  - wait: - 5s
                """))
        #expect(error.code == .malformedYAML)
        #expect((error.line, error.column) == (5, 11))
        #expect(
            error.message.hasSuffix(
                """
                reads as a list item; quote it, as in text: "- milk", or start the list on the next line
                """))
    }

    @Test func repeatedKeysAreRefused() throws {
        let error = try #require(
            ScenarioParsing.error("name: A\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\nname: B\n"))
        #expect(error.code == .malformedYAML)
        #expect((error.line, error.column) == (4, 1), "the repeat, not the map")
        #expect(error.message == "'name' is given twice in one map (first at line 1); keep one")

        // In a step's map, inside a list item.
        let nested = try #require(
            ScenarioParsing.error(
                """
                name: A
                devices: [{name: iPad}]
                steps:
                  - edit:
                      device: iPad
                      document: Notes
                      device: Mac
                """))
        #expect((nested.line, nested.column) == (7, 7))
        #expect(nested.message == "'device' is given twice in one map (first at line 5); keep one")

        // A flow map: the map is what the error can point at.
        let flow = try #require(
            ScenarioParsing.error("name: A\ndevices: [{name: iPad, name: Mac}]\nsteps: [{sync: all}]\n"))
        #expect(flow.line == 2)
        #expect(flow.message == "'name' is given twice in one map; keep one of each")
    }

    @Test func secondDocumentIsRefused() throws {
        let error = try #require(
            ScenarioParsing.error("name: A\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n---\nname: B\n"))
        #expect(error.code == .malformedYAML)
        #expect(error.line == 4)
        #expect(error.message.contains("remove the '---' line"))
    }

    @Test func badEscapesAndControlCharactersAreRefused() throws {
        let surrogate = try #require(
            ScenarioParsing.error("name: \"\\uD800\"\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n"))
        #expect(surrogate.code == .malformedYAML)
        #expect(surrogate.line == 1)
        let control = try #require(
            ScenarioParsing.error("name: A\ndevices: [{name: i\u{1}Pad}]\nsteps: [{sync: all}]\n"))
        #expect(control.code == .malformedYAML)
        #expect(control.line == 2)
        #expect(control.message.contains("escape inside double quotes"))
    }

    @Test func bytesThatAreNotUTF8AreRefused() throws {
        var data = Data("name: A\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n# ".utf8)
        data.append(contentsOf: [0xFF, 0xFE])
        #expect(throws: ScenarioErrors.self) { try ScenarioParser.parse(data: data, file: "bytes.yaml") }
        do {
            _ = try ScenarioParser.parse(data: data, file: "bytes.yaml")
        } catch let error as ScenarioErrors {
            #expect(error.errors.map(\.line) == [4])
            #expect(error.errors.first?.message == "the file is not UTF-8 text; save it as UTF-8")
        }
    }

    /// Editors on Windows often save UTF-8 with a byte order mark; YAML allows one at the start of the file.
    @Test func aLeadingByteOrderMarkIsRead() throws {
        let text = "name: A\ndevices: [{name: iPad}]\nsteps: [{sync: all}]\n"
        var data = Data([0xEF, 0xBB, 0xBF])
        data.append(Data(text.utf8))
        let marked = try ScenarioParser.parse(data: data, file: "marked.yaml")
        #expect(marked == (try ScenarioParser.parse(yaml: text, file: "marked.yaml")))
        #expect(marked.name == "A")
        // A problem after the mark is still reported where an editor shows it.
        let error = try #require(
            ScenarioParsing.error("\u{FEFF}name: A\ndevices: [{name: iPad}]\nsteps: [{sink: all}]\n"))
        #expect(error.code == .unknownKey)
        #expect(error.line == 3)
        #expect(error.column == 10)
    }

    @Test func emptyFileAndWrongRootAreRefused() throws {
        let empty = try #require(ScenarioParsing.error(""))
        #expect(empty.code == .missingKey)
        #expect(empty.message.contains("write at least name, devices and steps"))
        let list = try #require(ScenarioParsing.error("- sync: all\n"))
        #expect(list.code == .wrongType)
        #expect(list.message.contains("a scenario file is a map with name, devices and steps"))
    }

    // MARK: Unknown keys

    @Test func unknownKeysSuggestTheNearest() {
        let errors = ScenarioParsing.errors(
            """
            name: Typos
            strateg: merge
            devices:
              - name: iPad
                clockskew: 5s
            network: {latncy: 5ms}
            steps:
              - create: {devise: iPad, document: Notes}
              - edit: {device: iPad, document: Notes, insert: {at: 0, txt: "a"}}
              - expect: {document: Notes, stat: normal}
              - snyc: all
            """)
        #expect(errors.map(\.code) == Array(repeating: Code.unknownKey, count: 7))
        #expect(errors.map(\.line) == [2, 5, 6, 8, 9, 10, 11])
        #expect(
            errors.map(\.message) == [
                "unknown key 'strateg'; did you mean 'strategy'?",
                "unknown key 'clockskew'; did you mean 'clockSkew'?",
                "unknown key 'latncy'; did you mean 'latency'?",
                "unknown key 'devise'; did you mean 'device'?",
                "unknown key 'txt'; did you mean 'text'?",
                "unknown key 'stat'; did you mean 'state'?",
                "unknown action 'snyc'; did you mean 'sync'?",
            ])
        #expect(errors[3].column == 14)
    }

    @Test func unknownKeyWithoutNearNameListsTheKeys() throws {
        let error = try #require(
            ScenarioParsing.error(ScenarioParsing.withDocuments("  - crash: {device: iPad, when: save}")))
        #expect(error.code == .unknownKey)
        #expect(error.line == 10)
        #expect(error.message == "unknown key 'when'; crash takes 'device' or 'during'")
    }

    @Test func keysOutsideTheirActionSayToIndent() throws {
        let error = try #require(
            ScenarioParsing.error(
                ScenarioParsing.withDocuments(
                    """
                      - edit:
                        device: iPad
                        document: Notes
                        append: "x"
                    """)))
        #expect(error.code == .invalidValue)
        #expect(error.line == 11)
        #expect(error.message.hasPrefix("'device', 'document' and 'append' belong inside 'edit': indent under edit"))
    }

    @Test func twoActionsInOneStepAreRefused() throws {
        let error = try #require(ScenarioParsing.error(ScenarioParsing.withDocuments("  - {sync: all, wait: 5s}")))
        #expect(error.line == 10)
        #expect(error.message == "a step has one action, but this one has 'sync' and 'wait'; put each in its own step")
    }

    @Test func aKeyBesideTheActionIsNamed() throws {
        let error = try #require(
            ScenarioParsing.error(ScenarioParsing.withDocuments("  - {sync: all, devices: [iPad]}")))
        #expect(error.code == .unknownKey)
        #expect(error.line == 10)
        #expect(
            error.message == "unknown key 'devices' beside the action 'sync'; a step has its action key only, "
                + "such as - sync: all")
        let inner = try #require(
            ScenarioParsing.error(
                ScenarioParsing.withDocuments(
                    """
                      - edit: {device: iPad, document: Notes, append: "x"}
                        device: iPad
                        colour: red
                    """)))
        #expect(inner.message.hasPrefix("unknown key 'colour' beside the action 'edit'; "), "\(inner.message)")
    }

    @Test func aStepWithoutAnActionSaysSo() throws {
        let error = try #require(
            ScenarioParsing.error(ScenarioParsing.withDocuments("  - {device: iPad, document: Notes}")))
        #expect(error.code == .missingKey)
        #expect(
            error.message.hasPrefix(
                "this step has no action, only 'device' and 'document'; name the action and put "
                    + "them inside it, such as - save: {device: "), "\(error.message)")
        let typo = try #require(ScenarioParsing.error(ScenarioParsing.withDocuments("  - {wiat: 5s, device: iPad}")))
        #expect(typo.code == .unknownKey)
        #expect(
            typo.message == "this step has no action; 'wiat' is none (did you mean 'wait'?): write - wait: 30s",
            "\(typo.message)")
    }

    // MARK: Missing keys and wrong types

    @Test func requiredKeysAreNamed() {
        let errors = ScenarioParsing.errors("description: nothing else\n")
        #expect(errors.map(\.code) == [.missingKey, .missingKey, .missingKey])
        #expect(errors.map(\.line) == [1, 1, 1])
        #expect(
            errors.map(\.message) == [
                "the scenario needs 'name'; write name: Two devices edit a note offline",
                "the scenario needs 'devices'; write devices: [{name: iPad}, {name: Mac, clockSkew: -90s}]",
                "the scenario needs 'steps'; write steps: [{sync: all}]",
            ])
    }

    @Test func stepsNeedTheirKeys() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - create: {device: iPad}
                  - rename: {device: iPad, document: Notes}
                  - edit: {device: iPad, document: Notes}
                  - resolve: {device: iPad, document: Notes}
                  - edit: {device: iPad, document: Notes, insert: {at: 1}}
                  - expect: {document: Notes}
                  - expect: {state: normal}
                """))
        #expect(errors.map(\.code) == Array(repeating: Code.missingKey, count: 7))
        #expect(errors.map(\.line) == Array(10...16))
        #expect(
            errors.map(\.message) == [
                "create needs 'document'; write create: {device: iPad, document: Notes}",
                "rename needs 'to'; write rename: {device: iPad, document: Notes, to: Groceries}",
                "edit needs one operation: for a text document write insert: {at: 0, text: \"Hi \"}, "
                    + "delete: {at: 0, count: 3}, append: \" more\" or replace: \"whole text\"",
                "resolve needs 'choose'; write resolve: {device: iPad, document: Notes, choose: Mac}",
                "insert needs 'text'; write insert: {at: 0, text: \"Hi \"}",
                "expect checks nothing; add what to check, such as state: normal, text: \"...\", exists: true or converged: true",
                "'state' speaks of a document; add document: Notes to this expect",
            ])
    }

    @Test func wrongTypesSayWhatToWrite() {
        let errors = ScenarioParsing.errors(
            """
            name: Types
            seed: seven
            devices: iPad
            network: {loss: high}
            steps:
              - create: {device: iPad, document: Notes}
              - edit: {device: iPad, document: Notes, insert: {at: first, text: {a: b}}}
              - heal: yes
              - offline: iPad
              - sync: iPad
              - wait:
            """)
        #expect(errors.map(\.line) == [2, 3, 4, 7, 7, 8, 9, 10, 11])
        let messages = errors.map(\.message)
        #expect(
            messages.contains("seed must be a whole number from 0 to 18446744073709551615, not 'seven'; write seed: 7"))
        #expect(
            messages.contains(
                "devices must be a list, not text; write devices: [{name: iPad}, {name: Mac, clockSkew: -90s}]"))
        #expect(messages.contains("'high' is not a probability; write a number from 0 to 1, such as loss: 0.1"))
        #expect(messages.contains("at must be a whole number, not 'first'; write at: 0"))
        #expect(messages.contains("text must be a single value, not a map; write text: \"Hi \""))
        #expect(messages.contains("heal is true or false, not 'yes'; write heal: true or heal: false"))
        #expect(messages.contains("offline must be a list, not text; write offline: [iPad]"))
        #expect(
            messages.contains("sync takes all or a list of devices, not 'iPad'; write sync: all or sync: [iPad, Mac]"))
        #expect(messages.contains("wait has no value; write wait: 30s"))
        // Without a readable devices list, steps' device names are not checked (no error per step).
        #expect(!errors.contains { $0.code == .unknownDevice })
    }

    @Test func outOfRangeNumbersAreRefused() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - edit: {device: iPad, document: Notes, delete: {at: -1, count: 2}}
                  - edit: {device: Phone, document: Album, putImage: {name: big.png, bytes: 999999999999}}
                  - expect: {document: Notes, conflictVersions: -2}
                """))
        #expect(errors.map(\.code) == [.invalidValue, .invalidValue, .invalidValue])
        #expect(errors.map(\.line) == [10, 11, 12])
        #expect(errors[0].message == "at must be 0 or more, not -1; write at: 0")
        #expect(errors[1].message == "bytes must be from 0 to 67108864, not 999999999999; write bytes: 1024")
    }

    @Test func unknownWordsSuggestTheNearest() {
        let errors = ScenarioParsing.errors(
            """
            name: Words
            model: txt
            strategy: lastWins
            devices: [{name: iPad}]
            steps:
              - crash: {device: iPad, during: saving}
              - expect: {converged: true, lostChanges: 0}
            """)
        #expect(errors.map(\.line) == [2, 3, 6])
        #expect(
            errors.map(\.message) == [
                "unknown model 'txt'; did you mean 'text'?",
                "unknown strategy 'lastWins'; did you mean 'latestWins'?",
                "unknown during 'saving'; write 'save' or 'append'",
            ])
    }

    // MARK: Durations and probabilities

    @Test func badDurationsSayHowToWriteOne() {
        let errors = ScenarioParsing.errors(
            """
            name: Durations
            devices:
              - name: iPad
                clockSkew: 90 s
            network:
              latency: -5ms
            steps:
              - wait: 1.5s
              - wait: 30
              - wait: -30s
              - wait: 9000h
              - wait: 1h30m
            """)
        #expect(errors.map(\.code) == Array(repeating: Code.invalidValue, count: 7))
        #expect(errors.map(\.line) == [4, 6, 8, 9, 10, 11, 12])
        #expect(
            errors.map(\.message) == [
                "'90 s' is not a duration; write 90s",
                "latency cannot be negative; write a duration such as latency: 200ms",
                "'1.5s' is not a duration; write 1500ms",
                "'30' has no unit; write 30s, or 30ms, 30m or 30h",
                "wait cannot go back in time ('-30s'); write 0s or more, such as wait: 30s",
                "'9000h' is longer than a scenario allows; write at most 8760h (one year)",
                "'1h30m' is not a duration; write 250ms, 30s, 5m or 2h",
            ])
    }

    /// What a misspelt duration meant, when it can be told.
    @Test(arguments: [
        ("90 s", "90s"), ("5min", "5m"), ("5 Minutes", "5m"), ("2hrs", "2h"), ("1.5s", "1500ms"), ("0.25 sec", "250ms"),
        (".5s", "500ms"), ("-1.5m", "-90s"), ("+30s", "30s"), ("5S", "5s"), ("250 MS", "250ms"), ("1 hour", "1h"),
    ])
    func misspeltDurationsSayWhatTheyMeant(text: String, meant: String) {
        let errors = ScenarioParsing.errors(
            "name: D\ndevices: [{name: iPad, clockSkew: \"\(text)\"}]\nsteps: [{sync: all}]\n")
        #expect(errors.map(\.message) == ["'\(text)' is not a duration; write \(meant)"])
    }

    @Test(arguments: ["1h30m", "0.0001s", "5 fortnights", "1.2.3s", "s", ".s", "1e3ms"])
    func durationsWithoutAClearMeaningGetTheGeneralRule(text: String) {
        let errors = ScenarioParsing.errors(
            "name: D\ndevices: [{name: iPad, clockSkew: \"\(text)\"}]\nsteps: [{sync: all}]\n")
        #expect(errors.map(\.message) == ["'\(text)' is not a duration; write 250ms, 30s, 5m or 2h"])
    }

    @Test func overlongMisspeltDurationsSayTheLimit() {
        for text in ["9000 hours", "99999999999999999999ms", "600000 min"] {
            let errors = ScenarioParsing.errors(
                "name: D\ndevices: [{name: iPad, clockSkew: \"\(text)\"}]\nsteps: [{sync: all}]\n")
            #expect(
                errors.map(\.message) == ["'\(text)' is longer than a scenario allows; write at most 8760h (one year)"])
        }
    }

    @Test func probabilitiesStayWithinZeroAndOne() {
        let errors = ScenarioParsing.errors(
            """
            name: Odds
            devices: [{name: iPad}]
            network:
              loss: 1.5
              duplicate: -0.1
              reorder: 1
            steps: [{sync: all}]
            """)
        #expect(errors.map(\.line) == [4, 5])
        #expect(
            errors.map(\.message) == [
                "'1.5' is not a probability; write a number from 0 to 1, such as loss: 0.1",
                "'-0.1' is not a probability; write a number from 0 to 1, such as duplicate: 0.1",
            ])
    }

    // MARK: Devices

    @Test func devicesAreDeclaredOnceAndAtLeastOnce() {
        let duplicate = ScenarioParsing.errors(
            """
            name: Twins
            devices:
              - name: iPad
              - name: Mac
              - name: iPad
              - name: latest
            steps: [{sync: all}]
            """)
        #expect(duplicate.map(\.code) == [.duplicateName, .invalidValue])
        #expect(duplicate.map(\.line) == [5, 6])
        #expect(
            duplicate.map(\.message) == [
                "device 'iPad' is already declared at line 3; give each device its own name",
                "a device cannot be named 'latest': resolve's choose uses that word for a strategy; pick another name",
            ])
        let none = ScenarioParsing.errors("name: Nobody\ndevices: []\nsteps: [{sync: all}]\n")
        #expect(none.map(\.line) == [2])
        #expect(
            none.first?.message
                == "a scenario needs at least one device; write devices: [{name: iPad}, {name: Mac, clockSkew: -90s}]")
    }

    @Test func stepsNameDeclaredDevicesOnly() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - edit: {device: iPda, document: Notes, append: "x"}
                  - sync: [iPad, Unknown]
                  - offline: [Watch]
                  - restart: {device: TV}
                  - expect: {document: Notes, device: mac, state: normal}
                """))
        #expect(errors.map(\.code) == Array(repeating: Code.unknownDevice, count: 5))
        #expect(errors.map(\.line) == [10, 11, 12, 13, 14])
        #expect(
            errors.map(\.message) == [
                "unknown device 'iPda'; did you mean 'iPad'?",
                "unknown device 'Unknown'; the devices are 'iPad', 'Mac' and 'Phone' (declare more under devices)",
                "unknown device 'Watch'; the devices are 'iPad', 'Mac' and 'Phone' (declare more under devices)",
                "unknown device 'TV'; the devices are 'iPad', 'Mac' and 'Phone' (declare more under devices)",
                "unknown device 'mac'; did you mean 'Mac'?",
            ])
        #expect(errors[1].column == 18)
    }

    @Test func partitionsNameKnownDevicesOnceInTwoGroups() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - partition: [[iPad], [Mac, Watch]]
                  - partition: [[iPad, Mac], [Mac]]
                  - partition: [[iPad, iPad], [Mac]]
                  - partition: [[iPad, Mac, Phone]]
                  - partition: [[iPad], []]
                  - sync: [iPad, iPad]
                """))
        #expect(
            errors.map(\.code) == [
                .unknownDevice, .duplicateName, .duplicateName, .invalidValue, .invalidValue,
                .duplicateName,
            ])
        #expect(errors.map(\.line) == [10, 11, 12, 13, 14, 15])
        #expect(
            errors.map(\.message) == [
                "unknown device 'Watch'; the devices are 'iPad', 'Mac' and 'Phone' (declare more under devices)",
                "'Mac' is in two groups of the partition; put each device in exactly one group",
                "'iPad' is twice in one group of the partition; put each device in exactly one group",
                "a partition needs at least two groups (the devices named in no group form one); write partition: [[iPad], [Mac]]",
                "a group of partition names no device; write partition: [[iPad], [Mac]]",
                "'iPad' is named twice in sync; name each device once",
            ])
    }

    @Test func resolveChoosesADeviceOrAStrategy() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - resolve: {device: iPad, document: Notes, choose: Mca}
                  - resolve: {device: iPad, document: Notes, choose: Watch}
                  - resolve: {device: iPad, document: Notes, choose: lattest}
                """))
        #expect(errors.map(\.code) == [.unknownDevice, .unknownDevice, .unknownDevice])
        #expect(errors.map(\.line) == [10, 11, 12])
        #expect(
            errors.map(\.message) == [
                "choose names no device or strategy: 'Mca'; did you mean 'Mac'?",
                "choose names no device or strategy: 'Watch'; choose a device ('iPad', 'Mac' or 'Phone') or latest, merge or keepBoth",
                "choose names no device or strategy: 'lattest'; did you mean 'latest'?",
            ])
    }

    // MARK: Documents and models

    @Test func documentsMustBeCreatedFirst() {
        let errors = ScenarioParsing.errors(
            """
            name: Order
            devices: [{name: iPad}, {name: Mac}]
            steps:
              - edit: {device: iPad, document: Notes, append: "too early"}
              - create: {device: iPad, document: Notes}
              - save: {device: Mac, document: Notse}
              - expect: {document: Plan, exists: true}
            """)
        #expect(errors.map(\.code) == [.unknownDocument, .unknownDocument, .unknownDocument])
        #expect(errors.map(\.line) == [4, 6, 7])
        #expect(
            errors.map(\.message) == [
                "no step before this one creates the document 'Notes'; create it first, such as "
                    + "- create: {device: iPad, document: Notes}",
                "no step before this one creates the document 'Notse'; did you mean 'Notes'?",
                "no step before this one creates the document 'Plan'; create it first, such as "
                    + "- create: {device: iPad, document: Plan}",
            ])
    }

    @Test func operationsBelongToTheDocumentsModel() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - edit: {device: iPad, document: Notes, setText: "x"}
                  - edit: {device: iPad, document: Album, add: {record: r1}}
                  - edit: {device: iPad, document: List, append: "x"}
                  - rename: {device: iPad, document: Album, to: Photos}
                  - edit: {device: iPad, document: Photos, append: "x"}
                  - edit: {device: iPad, document: Photos, insert: {at: 0, text: "x"}}
                  - edit: {device: iPad, document: List, delete: {at: 0, count: 1}}
                """))
        #expect(errors.map(\.code) == Array(repeating: Code.wrongModel, count: 5))
        #expect(errors.map(\.line) == [10, 11, 12, 14, 16])
        #expect(
            errors[0].message == "'setText' is an operation on pages documents, but 'Notes' is a text document "
                + "(created at line 7); write insert: {at: 0, text: \"Hi \"}, delete: {at: 0, count: 3}, "
                + "append: \" more\" or replace: \"whole text\"")
        #expect(
            errors[1].message.hasPrefix("'add' is an operation on records documents, but 'Album' is a pages document"))
        #expect(
            errors[2].message.hasPrefix("'append' is an operation on text documents, but 'List' is a records document"))
        #expect(
            errors[3].message == "'append' is an operation on text documents, but 'Photos' is a pages document "
                + "(created at line 13); write insert: {at: 0, text: \"Hi \"}, delete: {at: 0, count: 3}, "
                + "setText: \"...\", putImage: {name: cover.png, bytes: 1024} or removeImage: {name: cover.png}")
        #expect(
            errors[4].message.hasPrefix(
                "'delete' is an operation on text and pages documents, but 'List' is a records document"))
    }

    /// `insert` and `delete` read the same on a pages document as on a text document, bad values included.
    @Test func pagesTextEditsAreReadAsTextOnes() throws {
        let steps = [
            "insert: {at: 7, text: \"Day 2\\n\"}", "delete: {at: 0, count: 3}", "insert: {at: -1, text: x}",
            "insert: {at: 1}", "insert: {at: first, text: {a: b}}", "delete: {at: 0, count: -2}",
            "delete: {at: 0, cnt: 2}", "delete: {at: 0, count: 99999999999999999999}", "insert: \"x\"", "delete: ~",
        ]
        for step in steps {
            let onText = ScenarioParsing.withDocuments("  - edit: {device: iPad, document: Notes, \(step)}")
            let onPages = ScenarioParsing.withDocuments("  - edit: {device: iPad, document: Album, \(step)}")
            let textErrors = ScenarioParsing.errors(onText)
            #expect(ScenarioParsing.errors(onPages) == textErrors, "\(step)")
            if textErrors.isEmpty {
                let text = try ScenarioParser.parse(yaml: onText, file: "text.yaml").steps.last?.action
                let pages = try ScenarioParser.parse(yaml: onPages, file: "pages.yaml").steps.last?.action
                guard case .edit(_, "Notes", let operation)? = text else {
                    Issue.record("\(step) read as \(String(describing: text))")
                    continue
                }
                #expect(pages == .edit(device: "iPad", document: "Album", operation: operation), "\(step)")
                #expect(operation.edits(.pages) && operation.edits(.text) && !operation.edits(.records))
            }
        }
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - edit: {device: iPad, document: Album, insert: {at: -1, text: x}}
                  - edit: {device: iPad, document: Album, delete: {at: 0}}
                """))
        #expect(errors.map(\.code) == [.invalidValue, .missingKey])
        #expect(
            errors.map(\.message) == [
                "at must be 0 or more, not -1; write at: 0", "delete needs 'count'; write delete: {at: 0, count: 3}",
            ])
    }

    @Test func scenarioDefaultModelDecidesTheOperations() throws {
        let error = try #require(
            ScenarioParsing.error(
                """
                name: Pages by default
                model: pages
                devices: [{name: iPad}]
                steps:
                  - create: {device: iPad, document: Book}
                  - edit: {device: iPad, document: Book, replace: "x"}
                """))
        #expect(error.code == .wrongModel)
        #expect(error.line == 6)
        #expect(
            error.message.hasSuffix(
                "write insert: {at: 0, text: \"Hi \"}, delete: {at: 0, count: 3}, setText: \"...\", "
                    + "putImage: {name: cover.png, bytes: 1024} or removeImage: {name: cover.png}"))
    }

    @Test func createsAgreeOnModels() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - create: {device: Mac, document: Plan, model: records, text: "x"}
                  - create: {device: Mac, document: Notes, model: pages}
                  - create: {device: Mac, document: Draft, text: "a", pages: {}}
                """))
        #expect(errors.map(\.code) == [.wrongModel, .wrongModel, .invalidValue])
        #expect(errors.map(\.line) == [10, 11, 12])
        #expect(
            errors.map(\.message) == [
                "'text' gives a text document's contents, but this create makes a records document; "
                    + "write records: {r1: {name: Ann}} or model: text",
                "'Notes' was created as a text document at line 7; a document keeps one model, so give this pages "
                    + "document another name",
                "create takes one of text, records or pages, but this one has 'text' and 'pages'; "
                    + "keep the one that fits the document's model",
            ])
    }

    @Test func expectationsFitTheDocumentsModel() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - expect: {document: List, text: "x"}
                  - expect: {document: Notes, images: [a.png]}
                  - expect: {document: Album, records: {r1: {}}}
                  - expect: {document: Notes, exists: false, text: "x"}
                """))
        #expect(errors.map(\.code) == [.wrongModel, .wrongModel, .wrongModel, .invalidValue])
        #expect(errors.map(\.line) == [10, 11, 12, 13])
        #expect(
            errors.map(\.message) == [
                "'text' checks a text document, but 'List' is a records document; write records: {r1: {name: Ann}}",
                "'images' checks a pages document, but 'Notes' is a text document; write text: \"...\" or contains: \"...\"",
                "'records' checks a records document, but 'Album' is a pages document; write images: [cover.png]",
                "a document that does not exist has no 'text'; drop it or write exists: true",
            ])
    }

    @Test func imageNamesAreSinglePathComponents() throws {
        let error = try #require(
            ScenarioParsing.error(
                ScenarioParsing.withDocuments(
                    "  - edit: {device: iPad, document: Album, putImage: {name: ../x.png, bytes: 1}}")))
        #expect(error.code == .invalidValue)
        #expect(error.line == 10)
        #expect(error.message == "'../x.png' cannot name an image: write a file name without '/', such as cover.png")
    }

    // MARK: Steps

    @Test func stepsAreRequired() {
        let missing = ScenarioParsing.errors("name: Idle\ndevices: [{name: iPad}]\n")
        #expect(missing.map(\.message) == ["the scenario needs 'steps'; write steps: [{sync: all}]"])
        let empty = ScenarioParsing.errors("name: Idle\ndevices: [{name: iPad}]\nsteps: []\n")
        #expect(empty.map(\.line) == [3])
        #expect(empty.map(\.message) == ["a scenario needs at least one step; write steps: [{sync: all}]"])
    }

    @Test func stepsThatAreNotMapsSayHowToWriteOne() {
        let errors = ScenarioParsing.errors(
            ScenarioParsing.withDocuments(
                """
                  - heal
                  - 42
                  - heal: false
                """))
        #expect(errors.map(\.line) == [10, 11, 12])
        #expect(
            errors.map(\.message) == [
                "a step is a map with one action key; write - heal: true",
                "a step is a map with one action key, not text; write - sync: all, for example",
                "heal: false does nothing; write heal: true to end the partition",
            ])
    }

    // MARK: Collecting

    @Test func everyErrorOfAFileIsReportedInLineOrder() throws {
        let yaml = """
            name: Many problems
            devices:
              - name: iPad
              - name: Mac
                clockSkew: 90 s
            network: {loss: 2}
            steps:
              - expect: {document: Notes, state: weird}
              - create: {device: iPda, document: Notes}
              - edit: {device: iPad, document: Notes, setText: "x"}
              - sync: [Unknown]
              - wait: soon
            """
        do {
            _ = try ScenarioParser.parse(yaml: yaml, file: "Scenarios/many.yaml")
            Issue.record("the file parsed")
        } catch let error as ScenarioErrors {
            #expect(error.errors.map(\.line) == [5, 6, 8, 8, 9, 10, 11, 12])
            #expect(
                error.errors.map(\.code) == [
                    .invalidValue, .invalidValue, .unknownDocument, .invalidValue,
                    .unknownDevice, .wrongModel, .unknownDevice, .invalidValue,
                ])
            #expect(error.description.split(separator: "\n").count == 8)
            #expect(error.description.hasPrefix("Scenarios/many.yaml:5:16: error: '90 s' is not a duration"))
            #expect(error.errors.allSatisfy { $0.file == "Scenarios/many.yaml" })
        } catch {
            Issue.record("parsing threw \(error), not ScenarioErrors")
        }
    }
}
