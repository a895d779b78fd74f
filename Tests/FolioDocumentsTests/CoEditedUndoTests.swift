import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

/// Undo while others type: a step takes back this device's edits and nothing else, whatever arrived since or in
/// between, and what arrives does not cut a person's undo step short.
@Suite struct CoEditedUndoTests {
    let laptop: LibraryFixture
    let phone: LibraryFixture

    init() throws {
        laptop = try LibraryFixture(seed: 71)
        phone = try LibraryFixture(seed: 72)
    }

    /// The same shared text open on both devices.
    func shared(_ text: String) async throws -> (
        a: DocumentLibrary, b: DocumentLibrary, first: Document<TextDocument>, second: Document<TextDocument>
    ) {
        let a = try laptop.coEditingLibrary()
        let b = try phone.coEditingLibrary()
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: text))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        return (a, b, first, second)
    }

    func text(_ document: Document<TextDocument>) async throws -> String {
        await document.model.text
    }

    func type(_ text: String, at position: Int, into document: Document<TextDocument>, clock: ManualClock)
        async throws
    {
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            try await document.edit(.insert(at: position + offset, text: String(scalar)))
            clock.advance(byMilliseconds: 50)
        }
    }

    /// The laptop's word was typed and its group ended; then the phone typed before it. Undo takes back the word,
    /// not the phone's text nor characters at the word's old positions.
    @Test func anUndoAfterOthersTypedBeforeTheStepTakesBackOnlyTheStep() async throws {
        let (a, b, first, second) = try await shared("one two\n")
        try await type("big ", at: 4, into: first, clock: laptop.clock)
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try exchange(a, b, first.id)
        try await second.refresh()
        try await type(">> ", at: 0, into: second, clock: phone.clock)
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(try await text(first) == ">> one big two\n")
        try await first.undo()
        #expect(try await text(first) == ">> one two\n")
        try await first.redo()
        #expect(try await text(first) == ">> one big two\n")
        try await first.undo()
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(try await text(second) == ">> one two\n")
        #expect(try await text(first) == ">> one two\n")
    }

    /// Others' typing arrives while the laptop's person types a word: the word stays one undo step, and undoing it
    /// leaves what the other device typed, before and inside the stretch the word covers.
    @Test func arrivalsDuringAGroupDoNotEndItAndItsUndoKeepsThem() async throws {
        let (a, b, first, second) = try await shared("ab\n")
        try await type("XYZ", at: 1, into: first, clock: laptop.clock)  // aXYZb
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.insert(at: 0, text: "1"))  // 1aXYZb
        try await second.edit(.insert(at: 3, text: "2"))  // 1aX2YZb
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(try await text(first) == "1aX2YZb\n")
        // The laptop goes on typing in the same group, and deletes a letter it typed before the arrival.
        try await first.edit(.insert(at: 6, text: "W"))  // 1aX2YZWb
        laptop.clock.advance(byMilliseconds: 50)
        try await first.edit(.delete(at: 5, count: 1))  // 1aX2YWb
        #expect(try await text(first) == "1aX2YWb\n")
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try await first.undo()
        #expect(try await text(first) == "1a2b\n", "one step takes back all the laptop typed, and only that")
        #expect(await first.canUndo == false)
        try await first.redo()
        #expect(try await text(first) == "1aX2YWb\n")
        try await first.undo()
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(try await text(second) == "1a2b\n")
        #expect(try a.store.heads(of: first.id).count == 1)
    }

    /// A deletion undone after others typed: the deleted text comes back where it was, between the characters it
    /// was deleted from, and the step survives reopening.
    @Test func aDeletionUndoneAfterArrivalsComesBackInPlaceAfterReopening() async throws {
        let (a, b, first, second) = try await shared("keep this word here\n")
        try await first.edit(.delete(at: 10, count: 5))  // "keep this here\n"
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.insert(at: 0, text: "Please "))
        try await second.edit(.insert(at: 21, text: "!"))  // "Please keep this here!\n"
        try exchange(a, b, first.id)
        try await first.close()
        let reopened = try await laptop.coEditingLibrary(live: false).open(first.id, as: TextDocument.self)
        #expect(try await text(reopened) == "Please keep this here!\n")
        try await reopened.undo()
        #expect(try await text(reopened) == "Please keep this word here!\n")
        try await reopened.close()
        _ = second
    }

    /// Steps undone one after the other while others' typing arrives between them: an undo that typed the deleted
    /// word again is taken back with the step before it, so undoing both leaves neither word nor copy.
    @Test func stepsUndoneInTurnAroundArrivalsLeaveOnlyWhatOthersTyped() async throws {
        let (a, b, first, second) = try await shared("start\n")
        try await type("word ", at: 0, into: first, clock: laptop.clock)  // word start
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.edit(.delete(at: 0, count: 5))  // start
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.insert(at: 5, text: "ed"))  // started
        try exchange(a, b, first.id)
        try await first.refresh()
        try await first.undo()
        #expect(try await text(first) == "word started\n", "the deletion undone")
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.insert(at: 0, text: "> "))  // > word started
        try exchange(a, b, first.id)
        try await first.refresh()
        try await first.undo()
        #expect(try await text(first) == "> started\n", "the typing undone: the word the undo brought back goes")
        #expect(await first.canUndo == false)
        try await first.redo()
        #expect(try await text(first) == "> word started\n")
        try await first.redo()
        #expect(try await text(first) == "> started\n")
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(try await text(second) == "> started\n")
    }

    /// A pages document undoes its text by reversal and its images by their inverses, in one step.
    @Test func aPagesStepUndoesTextAndImageAfterArrivals() async throws {
        let a = try laptop.coEditingLibrary()
        let b = try phone.coEditingLibrary()
        let first = try await a.create(
            PagesDocument.self, named: "Deck", contents: try PagesDocument(text: "title\n", images: [:]))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: PagesDocument.self)
        try await first.edit(.insertText(at: 5, text: " page"))
        try await first.edit(.putImage(name: "cover.png", bytes: Data([1, 2, 3])))
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.insertText(at: 0, text: "My "))
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(await first.model.text == "My title page\n")
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try await first.undo()
        #expect(await first.model.text == "My title\n")
        #expect(await first.model.images.isEmpty)
        try await first.redo()
        #expect(await first.model.text == "My title page\n")
        #expect(await first.model.images["cover.png"] == Data([1, 2, 3]))
    }

    /// An older step is undone after a newer one whose undo typed a word again, and the other device deleted part of
    /// that word meanwhile: taking the older step back would bring back the part deleted, so the undo is refused and
    /// nothing changes.
    @Test func anUndoThatWouldBringBackWhatOthersDeletedIsRefused() async throws {
        let (a, b, first, second) = try await shared("xyz\n")
        try await type("ab", at: 0, into: first, clock: laptop.clock)  // abxyz
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.edit(.delete(at: 2, count: 3))  // ab
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try await first.undo()  // abxyz, the copy of xyz typed by the undo
        try exchange(a, b, first.id)
        try await second.refresh()
        try await second.edit(.delete(at: 3, count: 1))  // abxz
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(try await text(first) == "abxz\n")
        let heads = try a.store.heads(of: first.id).map(\.hash)
        await #expect(throws: DocumentError.self) { try await first.undo() }
        #expect(try await text(first) == "abxz\n", "nothing changes")
        #expect(try a.store.heads(of: first.id).map(\.hash) == heads)
        _ = second
    }

    /// With `liveCommitDelay: nil` the group waits for its end even while syncing live, and what arrives ends it.
    @Test func withoutALiveDelayAnArrivalEndsTheGroup() async throws {
        let a = try laptop.coEditingLibrary(liveCommitDelay: nil)
        let b = try phone.coEditingLibrary()
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "ab\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        try await first.edit(.insert(at: 1, text: "X"))
        try await second.edit(.insert(at: 0, text: "1"))
        try exchange(a, b, first.id)
        try await first.refresh()
        try await first.edit(.insert(at: 3, text: "Y"))  // 1aXYb
        laptop.clock.advance(byMilliseconds: 2_000)
        try await first.runDueWork()
        try await first.undo()
        #expect(try await text(first) == "1aXb\n", "the arrival ended the first group: the undo takes back Y only")
        try await first.undo()
        #expect(try await text(first) == "1ab\n")
    }
}
