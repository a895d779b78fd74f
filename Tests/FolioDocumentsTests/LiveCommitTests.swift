import FolioCore
import FolioModels
import FolioStore
import Foundation
import Testing

@testable import FolioDocuments

/// While the library syncs live, an open group's edits are committed as changes `liveCommitDelay` after they are made
/// (so other devices see them), and the group stays one undo step until `groupingInterval` ends it.
@Suite struct LiveCommitTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    /// The standard grouping (1 s) with a live delay of 20 ms.
    func liveLibrary() throws -> DocumentLibrary {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, liveCommitDelay: 20))
        library.noteLiveSync(running: true)
        return library
    }

    func changeCount(of document: DocumentID, in library: DocumentLibrary) throws -> UInt64 {
        try library.store.vector(of: document).changeCount
    }

    @Test func editsAreCommittedWithinTheDelayAndUndoneAsOneStep() async throws {
        let library = try liveLibrary()
        let document = try await library.create(TextDocument.self, named: "Notes")
        let created = try changeCount(of: document.id, in: library)
        try await document.edit(.append("a"))
        #expect(
            await document.nextDueTime(now: fixture.clock.now().millisecondsSince1970)
                == fixture.clock.now().millisecondsSince1970 + 20, "the commit is due 20 ms after the edit")
        fixture.clock.advance(byMilliseconds: 10)
        try await document.runDueWork()
        #expect(try changeCount(of: document.id, in: library) == created, "not yet: 10 ms")
        fixture.clock.advance(byMilliseconds: 10)
        try await document.runDueWork()
        #expect(try changeCount(of: document.id, in: library) == created + 1, "committed 20 ms after the edit")
        #expect(await document.changeCount == 1, "a change not yet saved; nothing waits to be committed")
        for letter in ["b", "c"] {
            fixture.clock.advance(byMilliseconds: 100)
            try await document.edit(.append(letter))
            fixture.clock.advance(byMilliseconds: 20)
            try await document.runDueWork()
        }
        #expect(try changeCount(of: document.id, in: library) == created + 3)
        #expect(await document.canUndo)

        // The group ends a second after its last edit: one undo step of three changes.
        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.runDueWork()
        #expect(try changeCount(of: document.id, in: library) == created + 3, "the step is recorded without a change")
        try await document.undo()
        #expect(await document.model.text == "", "one undo takes back the three changes")
        #expect(await document.canUndo == false)
        try await document.redo()
        #expect(await document.model.text == "abc")
        try await document.undo()
        #expect(await document.model.text == "")
        try await document.close()
    }

    @Test func aStepOfSeveralChangesIsSavedByReferenceAndUndoneAfterReopening() async throws {
        let library = try liveLibrary()
        let document = try await library.create(TextDocument.self, named: "Notes")
        let text = String(repeating: "lorem ipsum ", count: 400)
        for piece in [text, "one", "two"] {
            try await document.edit(.append(piece))
            fixture.clock.advance(byMilliseconds: 30)
            try await document.runDueWork()
        }
        // Typed after the last live commit and committed with the end of the group.
        try await document.edit(.append("three"))
        fixture.clock.advance(byMilliseconds: 2_000)
        try await document.runDueWork()
        let saved = try #require(
            try library.localState.value(UndoHistory<TextDocument.Operation>.stateKey, of: document.id))
        #expect(saved.count < 100, "four changes by reference, not \(saved.count) bytes of copied text")
        let history = UndoHistory<TextDocument.Operation>(decoding: saved)
        #expect(history.undoSteps.map(\.sources.count) == [4])
        try await document.close()

        let reopened = try await fixture.library(autosave: .standard).open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == text + "onetwothree")
        try await reopened.undo()
        #expect(await reopened.model.text == "", "the step computed from the log reverses all four changes")
        try await reopened.redo()
        #expect(await reopened.model.text == text + "onetwothree")
        try await reopened.close()
    }

    /// Many edits after a live commit: their inverses, combined in chunks, still take the model back to the last
    /// committed change, in the right order.
    @Test func theEditsAfterALiveCommitUndoToIt() throws {
        var model = TextDocument(text: "0123456789abcdefghij")
        var group = EditGroup<TextDocument>()
        group.add(.append("!"), inverse: try model.apply(.append("!")))
        group.markUncommittedCommitted()
        let committed = model
        var random = SplitMix64(seed: 39)
        for _ in 0..<9_000 {
            let length = model.text.unicodeScalars.count
            let operation: TextDocument.Operation =
                random.next() % 2 == 0 || length < 2
                ? .insert(at: Int(random.next() % UInt64(length + 1)), text: "x")
                : .delete(at: Int(random.next() % UInt64(length - 1)), count: 1)
            group.add(operation, inverse: try model.apply(operation))
        }
        for operation in group.uncommittedUndoOperations { _ = try model.apply(operation) }
        #expect(model == committed)
    }

    /// While a live sync commits each edit, a group of continuous typing still ends at `groupLimit` edits, and
    /// counts as one unsaved change however many changes it made.
    @Test func aLiveGroupEndsAtItsLimitAndCountsAsOneUnsavedChange() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, groupLimit: 50))
        library.noteLiveSync(running: true)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.save()
        for _ in 0..<30 { try await document.edit(.append("a")) }
        #expect(await document.changeCount == 1, "thirty changes of one group: one unsaved change")
        for _ in 0..<90 { try await document.edit(.append("b")) }
        // 120 edits: groups of 50, 50 and 20.
        try await document.undo()
        let text = await document.model.text
        #expect(
            text == String(repeating: "a", count: 30) + String(repeating: "b", count: 70),
            "the undo takes back the last group, its 20 edits: \(text)")
        try await document.undo()
        #expect(
            await document.model.text == String(repeating: "a", count: 30) + String(repeating: "b", count: 20),
            "then the 50 edits of the second group")
        try await document.close()
    }

    @Test func offlineEditsWaitForTheirGroup() async throws {
        let library = try fixture.library(autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil))
        let document = try await library.create(TextDocument.self, named: "Notes")
        let created = try changeCount(of: document.id, in: library)
        try await document.edit(.append("a"))
        fixture.clock.advance(byMilliseconds: 500)
        try await document.runDueWork()
        #expect(try changeCount(of: document.id, in: library) == created, "no live sync: the group commits at its end")
        fixture.clock.advance(byMilliseconds: 600)
        try await document.runDueWork()
        #expect(try changeCount(of: document.id, in: library) == created + 1)
        try await document.close()
    }

    @Test func aDelayOfZeroCommitsEachEditAtOnce() async throws {
        let library = try fixture.library(
            autosave: AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, liveCommitDelay: 0))
        library.noteLiveSync(running: true)
        let document = try await library.create(TextDocument.self, named: "Notes")
        let created = try changeCount(of: document.id, in: library)
        try await document.edit(.append("a"))
        try await document.edit(.append("b"))
        #expect(try changeCount(of: document.id, in: library) == created + 2)
        try await document.undo()
        #expect(await document.model.text == "", "both edits, one group")
        try await document.close()
    }

    /// A revert drops the edits not yet committed; those committed already stay in the log, and the revert's
    /// change takes them back like the earlier ones (a revert clears the undo history, as `UIDocument`'s does).
    @Test func aRevertTakesBackTheEditsCommittedAlready() async throws {
        let library = try liveLibrary()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("saved"))
        fixture.clock.advance(byMilliseconds: 2_000)
        try await document.runDueWork()
        try await document.save()
        try await document.edit(.append(" live"))
        fixture.clock.advance(byMilliseconds: 30)
        try await document.runDueWork()
        let committed = try changeCount(of: document.id, in: library)
        try await document.edit(.append(" dropped"))
        try await document.revert()
        #expect(await document.model.text == "saved")
        #expect(try changeCount(of: document.id, in: library) == committed + 1, "the revert's change, not the drop")
        #expect(await document.canUndo == false)
        #expect(await document.changeCount == 0)
        try await document.close()
        let reopened = try await fixture.library(autosave: .standard).open(document.id, as: TextDocument.self)
        #expect(await reopened.model.text == "saved")
        try await reopened.close()
    }
}
