import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Editing: grouping rapid edits into changes, the change count, and undo and redo as changes in the log.
@Suite struct DocumentEditingTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    /// Groups edits made within a second; never saves by itself.
    static let grouping = AutosavePolicy(
        idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 1_000)

    // MARK: Grouping and the change count

    @Test func rapidEditsAreGroupedIntoOneChange() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(TextDocument.self, named: "Notes")
        for (index, character) in "Hello".enumerated() {
            try await document.edit(.insert(at: index, text: String(character)))
            fixture.clock.advance(byMilliseconds: 200)
        }
        #expect(await document.model.text == "Hello")
        #expect(try library.edits(of: document.id).isEmpty, "the group is still open")
        #expect(await document.changeCount == 1)

        try await document.commit()
        let edits = try library.edits(of: document.id)
        #expect(edits.count == 1)
        #expect(
            try edits[0].operations(as: TextDocument.Operation.self) == [.insert(at: 0, text: "Hello")],
            "typing is combined")
        #expect(await document.changeCount == 1)
        try await document.commit()
        #expect(try library.edits(of: document.id).count == 1, "committing nothing appends nothing")
    }

    @Test func anEditAfterTheGroupingIntervalStartsANewChange() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.edit(.append("b"))
        #expect(try library.edits(of: document.id).isEmpty, "an edit exactly at the interval still joins the group")
        fixture.clock.advance(byMilliseconds: 1_001)
        try await document.edit(.append("c"))
        #expect(await document.changeCount == 2)

        let edits = try library.edits(of: document.id)
        #expect(edits.count == 1, "the first group was committed by the late edit")
        #expect(try edits[0].operations(as: TextDocument.Operation.self) == [.append("a"), .append("b")])
        try await document.close()
        #expect(try library.edits(of: document.id).count == 2, "close commits the open group")
    }

    @Test func aGroupIsCommittedAtItsLimit() async throws {
        let policy = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 60_000, groupLimit: 3)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(RecordsDocument.self, named: "People")
        for index in 1...7 {
            try await document.edit(.add(record: "r\(index)", fields: [:]))
        }
        try await document.commit()
        let sizes = try library.edits(of: document.id).map {
            try $0.operations(as: RecordsDocument.Operation.self).count
        }
        #expect(sizes == [3, 3, 1])
        #expect(await document.model.ids == (1...7).map { "r\($0)" })
    }

    /// The limit counts the group's operations after combining: typing on does not bring the commit closer.
    @Test func theGroupLimitCountsCombinedOperations() async throws {
        let policy = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 60_000, groupLimit: 3)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        let edits: [TextDocument.Operation] = [
            .insert(at: 0, text: "a"), .insert(at: 1, text: "b"), .insert(at: 2, text: "c"), .insert(at: 0, text: "x"),
            .insert(at: 1, text: "y"), .insert(at: 2, text: "z"), .delete(at: 0, count: 1), .insert(at: 0, text: "w"),
        ]
        for edit in edits { try await document.edit(edit) }
        try await document.commit()
        let groups = try library.edits(of: document.id).map { try $0.operations(as: TextDocument.Operation.self) }
        #expect(
            groups == [
                [.insert(at: 0, text: "abc"), .insert(at: 0, text: "xyz"), .delete(at: 0, count: 1)],
                [.insert(at: 0, text: "w")],
            ])
        #expect(await document.model.text == "wyzabc")
    }

    /// A group of more edits than are kept uncombined: its change holds the operations combined as one fold, and
    /// undoing it (open, and committed) restores the text before it.
    @Test func aLongGroupIsCombinedAsOne() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("start"))
        try await document.commit()
        var made: [TextDocument.Operation] = []
        var length = 5
        for index in 0..<9_000 {
            // Typing on at the end, a backspace now and then, and a jump back to the start every 1,000 edits.
            let operation: TextDocument.Operation =
                index % 1_000 == 999
                ? .insert(at: 0, text: ">")
                : index % 97 == 96
                    ? .delete(at: length - 1, count: 1)
                    : .insert(at: length, text: "x")
            made.append(operation)
            length += { if case .delete = operation { return -1 } else { return 1 } }()
            try await document.edit(operation)
        }
        let typed = await document.model.text
        try await document.undo()
        #expect(await document.model.text == "start", "the open group is committed, then undone as one step")
        let edits = try library.edits(of: document.id)
        #expect(try edits[edits.count - 2].operations(as: TextDocument.Operation.self) == TextDocument.combined(made))
        try await document.redo()
        #expect(await document.model.text == typed)

        for operation in made { try await document.edit(operation) }
        try await document.commit()
        let group = try #require(try library.edits(of: document.id).last)
        #expect(try group.operations(as: TextDocument.Operation.self) == TextDocument.combined(made))
        try await document.undo()
        #expect(await document.model.text == typed)
    }

    @Test func withoutGroupingEveryEditIsItsOwnChange() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.edit(.append("b"))
        try await document.edit(.append("c"))
        #expect(try library.edits(of: document.id).count == 3)
        #expect(await document.changeCount == 3)
        #expect(await document.hasUnsavedChanges)
        try await document.save()
        #expect(await document.changeCount == 0)
        try await document.edit(.append("d"))
        #expect(await document.changeCount == 1)
    }

    @Test func saveAndUndoCommitTheOpenGroup() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.save()
        #expect(try library.edits(of: document.id).count == 1)
        try await document.edit(.append("b"))
        try await document.undo()
        #expect(await document.model.text == "a")
        #expect(try library.edits(of: document.id).map(\.editIntent).count == 3, "the group, then its undo")
    }

    @Test func aRefusedEditChangesNothing() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("abc"))
        let error = try await #require(throws: DocumentError.self) { try await document.edit(.delete(at: 2, count: 5)) }
        #expect(error.code == .invalidOperation)
        let cause = try #require(error.cause as? ModelError)
        #expect(cause.code == .invalidOperation)
        #expect(error.message == "the edit does not apply to Notes")
        #expect(error.description == "the edit does not apply to Notes: \(cause.message)", "the reason, once")
        #expect(await document.model.text == "abc")
        #expect(await document.changeCount == 1)
        #expect(try library.edits(of: document.id).count == 1)
    }

    @Test func aBatchIsOneChangeOrNothing() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(RecordsDocument.self, named: "People")
        try await document.edit([
            .add(record: "r1", fields: [:]), .set(record: "r1", field: "name", value: "Ann"),
            .add(record: "r2", fields: [:]),
        ])
        #expect(try library.edits(of: document.id).count == 1, "a batch is committed before the call returns")
        let before = await document.model

        let error = try await #require(throws: DocumentError.self) {
            try await document.edit([.remove(record: "r2"), .remove(record: "r9")])
        }
        #expect(error.code == .invalidOperation)
        #expect(await document.model == before, "the batch's first operation was rolled back")
        #expect(try library.edits(of: document.id).count == 1)

        try await document.undo()
        #expect(await document.model == RecordsDocument(), "the batch is one undo step")
    }

    // MARK: Undo and redo

    @Test func undoIsAChangeCarryingTheInverseOperations() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("Hello"))
        try await document.edit(.insert(at: 5, text: ", world"))
        let target = try #require(try library.edits(of: document.id).last)

        try await document.undo()
        #expect(await document.model.text == "Hello")
        let undo = try #require(try library.log(of: document.id).last)
        #expect(undo.editIntent == .undo(of: target.id))
        #expect(try undo.operations(as: TextDocument.Operation.self) == [.delete(at: 5, count: 7)])
        #expect(undo.parents == [target.hash])
        #expect(await document.canRedo)

        try await document.redo()
        #expect(await document.model.text == "Hello, world")
        let redo = try #require(try library.log(of: document.id).last)
        #expect(redo.editIntent == .redo(of: target.id))
        #expect(try redo.operations(as: TextDocument.Operation.self) == [.insert(at: 5, text: ", world")])
        #expect(await document.changeCount == 4, "undo and redo are changes too")

        // Undoing the redo names the redo change.
        try await document.undo()
        #expect(try library.log(of: document.id).last?.editIntent == .undo(of: redo.id))
    }

    @Test func undoingTheOpenGroupUndoesItAsOneStep() async throws {
        let library = try fixture.library(autosave: Self.grouping)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        fixture.clock.advance(byMilliseconds: 5_000)
        for character in " two" {
            try await document.edit(.append(String(character)))
        }
        #expect(await document.canUndo)
        #expect(await document.canRedo == false, "nothing to redo while a group is open")
        try await document.undo()
        #expect(await document.model.text == "one")
        try await document.undo()
        #expect(await document.model.text == "")
        let error = try await #require(throws: DocumentError.self) { try await document.undo() }
        #expect(error.code == .nothingToUndo)
        try await document.redo()
        try await document.redo()
        #expect(await document.model.text == "one two")
        let redoError = try await #require(throws: DocumentError.self) { try await document.redo() }
        #expect(redoError.code == .nothingToRedo)
    }

    @Test func aNewEditClearsTheRedoStack() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.edit(.append("b"))
        try await document.undo()
        #expect(await document.canRedo)
        try await document.edit(.append("c"))
        #expect(await document.canRedo == false)
        await #expect(throws: DocumentError.self) { try await document.redo() }
        #expect(await document.model.text == "ac")
    }

    @Test func undoAndRedoSurviveCloseAndReopen() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        try await document.edit(.append(" two"))
        try await document.edit(.append(" three"))
        try await document.undo()
        try await document.close()

        let second = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        #expect(await second.model.text == "one two")
        #expect(await second.canUndo)
        #expect(await second.canRedo)
        try await second.redo()
        #expect(await second.model.text == "one two three")
        try await second.undo()
        try await second.undo()
        #expect(await second.model.text == "one")
        try await second.close()

        let third = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        #expect(await third.model.text == "one")
        try await third.undo()
        #expect(await third.model.text == "")
        #expect(await third.canUndo == false)
        try await third.redo()
        try await third.redo()
        try await third.redo()
        #expect(await third.model.text == "one two three")
    }

    @Test func anUndoThatNoLongerAppliesChangesNothing() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(RecordsDocument.self, named: "People")
        try await document.edit(.add(record: "r1", fields: [:]))
        try await document.edit(.set(record: "r1", field: "name", value: "Ann"))
        // Another process removes the record.
        try library.store.append(
            .edit(Edit(operations: RecordsDocument.Operation.encodeGroup([.remove(record: "r1")]))), to: document.id)
        #expect(try await document.refresh())
        #expect(await document.model.ids.isEmpty)
        let changes = try library.log(of: document.id).count

        let error = try await #require(throws: DocumentError.self) { try await document.undo() }
        #expect(error.code == .invalidOperation)
        #expect(await document.model.ids.isEmpty)
        #expect(try library.log(of: document.id).count == changes, "nothing was appended")
    }

    @Test func theUndoHistoryKeepsTheNewestHundredSteps() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        for _ in 0..<105 { try await document.edit(.append("x")) }
        for _ in 0..<100 { try await document.undo() }
        #expect(await document.model.text == "xxxxx")
        #expect(await document.canUndo == false)
        await #expect(throws: DocumentError.self) { try await document.undo() }
    }

    /// Random edits, undos, redos, commits and reopenings against a reference that keeps every state: the model
    /// always equals the reference, and reopening shows the same model and the same undo and redo stacks.
    @Test func randomEditingMatchesAReferenceUndoStack() async throws {
        let seed = TestSeed.make("randomEditingMatchesAReferenceUndoStack")
        var random = SplitMix64(seed: seed)
        var library = try fixture.library(autosave: Self.grouping)
        var document = try await library.create(TextDocument.self, named: "Notes")
        // The reference: the committed text after each undoable step, and the redoable ones.
        var undoStates: [String] = []
        var redoStates: [String] = []
        var groupOpen = false
        var text = ""
        for step in 0..<80 {
            let context = "seed \(seed), step \(step)"
            switch random.int(in: 0...9) {
            case 0...4:
                if !groupOpen {
                    undoStates.append(text)
                    redoStates.removeAll()
                }
                let scalars = Array(text.unicodeScalars)
                let operation: TextDocument.Operation
                if scalars.isEmpty || random.int(in: 0...2) > 0 {
                    let letter = String(UnicodeScalar(UInt8(random.int(in: 97...122))))
                    operation = .insert(at: random.int(in: 0...scalars.count), text: letter)
                } else {
                    let position = random.int(in: 0...(scalars.count - 1))
                    operation = .delete(at: position, count: random.int(in: 1...(scalars.count - position)))
                }
                var reference = TextDocument(text: text)
                _ = try reference.apply(operation)
                text = reference.text
                try await document.edit(operation)
                groupOpen = true
            case 5:
                fixture.clock.advance(byMilliseconds: 2_000)
                groupOpen = false
            case 6:
                if undoStates.isEmpty {
                    await #expect(throws: DocumentError.self, "\(context)") { try await document.undo() }
                } else {
                    redoStates.append(text)
                    text = undoStates.removeLast()
                    try await document.undo()
                }
                groupOpen = false
            case 7:
                if redoStates.isEmpty || groupOpen {
                    await #expect(throws: DocumentError.self, "\(context)") { try await document.redo() }
                    // A refused redo still commits the open group.
                } else {
                    undoStates.append(text)
                    text = redoStates.removeLast()
                    try await document.redo()
                }
                groupOpen = false
            case 8:
                try await document.commit()
                groupOpen = false
            default:
                try await document.close()
                library = try fixture.library(autosave: Self.grouping)
                document = try await library.open(named: "Notes", as: TextDocument.self)
                groupOpen = false
            }
            #expect(await document.model.text == text, "\(context)")
            #expect(await document.canUndo == !undoStates.isEmpty, "\(context)")
            #expect(await document.canRedo == (!redoStates.isEmpty && !groupOpen), "\(context)")
        }
        try await document.close()
        let reopened = try await fixture.library().open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == text, "seed \(seed)")
    }
}
