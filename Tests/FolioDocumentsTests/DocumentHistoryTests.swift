import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// A document's history: versions recorded at saves, closes, arrivals and restores, coalesced; versions named on any
/// device; contents at a version or a change; restoring one as an undoable change.
@Suite struct DocumentHistoryTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    /// Eleven minutes: past the window in which recorded versions coalesce.
    static let pastWindow: Int64 = 11 * 60 * 1000

    @Test func eachSaveOutsideTheWindowIsAVersionWithItsContentsAndWhatChanged() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        try await document.save()
        let firstCount = try library.log(of: document.id).count
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.append(" two"))
        try await document.edit(.append(" three"))
        try await document.save()

        let history = try await document.history()
        #expect(history.map(\.occasion) == [.saved, .saved])
        #expect(history.map(\.date) == [LibraryFixture.start, LibraryFixture.start.advanced(by: Self.pastWindow)])
        let total = try library.log(of: document.id).count
        #expect(history.map(\.summary.changes) == [firstCount, total - firstCount])
        #expect(firstCount == 2, "the creation and the first edit")
        #expect(history.allSatisfy { $0.summary.devices == [library.device.id] && $0.device == library.device.id })
        #expect(try await document.contents(at: history[0]).text == "one")
        #expect(try await document.contents(at: history[1]).text == "one two three")
    }

    @Test func savesWithinTheWindowCoalesceIntoItsLatestState() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        for index in 0..<30 {
            try await document.edit(.append("\(index) "))
            try await document.save()
            fixture.clock.advance(byMilliseconds: 10_000)
        }
        let history = try await document.history()
        #expect(history.count == 1, "thirty saves ten seconds apart are one version: \(history)")
        let text = await document.model.text
        #expect(try await document.contents(at: history[0]).text == text)
        #expect(history[0].summary.changes == 31)
        // A save past the window starts a new version; saving again with nothing new records nothing.
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.append("later"))
        try await document.save()
        try await document.save()
        #expect(try await document.history().count == 2)
    }

    @Test func recordedVersionsSurviveClosingAndReopening() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("kept"))
        try await document.save()
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.append(" and more"))
        try await document.close()
        let before = try await library.open(document.id, as: TextDocument.self)
        let history = try await before.history()
        #expect(history.map(\.occasion) == [.saved, .closed])
        #expect(try await before.contents(at: history[0]).text == "kept")
        try await before.close()
        let reopened = try fixture.library()
        let again = try await reopened.open(document.id, as: TextDocument.self)
        #expect(try await again.history() == history)
    }

    @Test func restoreMakesAnOlderVersionCurrentAsAnUndoableChange() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("The first draft."))
        try await document.save()
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.delete(at: 4, count: 6))
        try await document.edit(.insert(at: 4, text: "second "))
        try await document.save()
        let logBefore = try library.log(of: document.id).count
        let first = try #require(try await document.history().first)

        try await document.restore(first)
        #expect(await document.model.text == "The first draft.")
        let log = try library.log(of: document.id)
        #expect(log.count == logBefore + 1, "the restore is one change")
        guard case .edit = log.last?.kind else {
            Issue.record("a text is restored by an edit, not \(String(describing: log.last?.kind))")
            return
        }
        let history = try await document.history()
        #expect(history.last?.occasion == .restored)
        #expect(try await document.contents(at: history[1]).text == "The second draft.", "nothing is lost")

        try await document.undo()
        #expect(await document.model.text == "The second draft.")
    }

    @Test func restoringTheCurrentVersionChangesNothing() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("same"))
        try await document.save()
        let count = try library.log(of: document.id).count
        try await document.restore(try #require(try await document.history().last))
        #expect(try library.log(of: document.id).count == count)
    }

    @Test func aNamedVersionSyncsAndReadsTheSameOnTheOtherDevice() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes", in: .shared)
        try await document.edit(.append("Chapter one."))
        let named = try await document.markVersion("  Sent to editor ")
        #expect(named.name == "Sent to editor")
        #expect(named.occasion == .named)
        try await document.edit(.append(" Chapter two."))
        try await document.commit()

        let other = try LibraryFixture(seed: 2)
        let otherLibrary = try other.library()
        try exchange(library, otherLibrary, document.id)
        let copy = try await otherLibrary.open(document.id, as: TextDocument.self)
        #expect(await copy.model.text == "Chapter one. Chapter two.", "a named version changes nothing")
        let history = try await copy.history()
        let mark = try #require(history.first { $0.occasion == .named })
        #expect(mark.name == "Sent to editor")
        #expect(mark.id == named.id)
        #expect(mark.device == library.device.id)
        #expect(try await copy.contents(at: mark).text == "Chapter one.")
    }

    @Test func aNamedVersionSavedAndClosedIsListedOnce() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("draft"))
        try await document.save()
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.append(" two"))
        try await document.markVersion("Final")
        try await document.save()
        try await document.close()
        let reopened = try await library.open(document.id, as: TextDocument.self)
        let history = try await reopened.history()
        #expect(history.map(\.occasion) == [.saved, .named], "\(history)")
        #expect(try await reopened.contents(at: history[1]).text == "draft two")
    }

    @Test func markVersionRefusesAnEmptyOrOverlongName() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        for name in ["", "   ", String(repeating: "x", count: Document<TextDocument>.versionNameLimit + 1)] {
            let error = try await #require(throws: DocumentError.self) { try await document.markVersion(name) }
            #expect(error.code == .invalidOperation)
        }
        #expect(try library.log(of: document.id).count == 1, "nothing is appended")
    }

    @Test func anArrivalOfAnotherDevicesWorkIsAVersion() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes", in: .shared)
        try await document.edit(.append("mine"))
        try await document.save()
        let other = try LibraryFixture(seed: 2)
        let otherLibrary = try other.library()
        try exchange(library, otherLibrary, document.id)
        let copy = try await otherLibrary.open(document.id, as: TextDocument.self)
        try await copy.edit(.append(", theirs"))
        try await copy.commit()
        try exchange(library, otherLibrary, document.id)
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        #expect(try await document.refresh())

        let history = try await document.history()
        #expect(history.map(\.occasion) == [.saved, .received])
        #expect(history[1].summary.devices == [otherLibrary.device.id])
        #expect(try await document.contents(at: history[1]).text == "mine, theirs")
    }

    @Test func contentsAtAChangeAndAtAnUnknownOne() async throws {
        let library = try fixture.library()
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.commit()
        try await document.edit(.append("b"))
        try await document.commit()
        let log = try library.log(of: document.id)
        #expect(try await document.contents(at: log[1].hash).text == "a")
        #expect(try await document.contents(at: log[2].hash).text == "ab")
        let error = try await #require(throws: DocumentError.self) {
            try await document.contents(at: ChangeHash(hashing: [1, 2, 3]))
        }
        #expect(error.code == .notFound)
    }

    @Test func recordsAreRestoredByOperationsInTheirOrder() async throws {
        let library = try fixture.library()
        let document = try await library.create(RecordsDocument.self, named: "Tasks")
        try await document.edit(.add(record: "a", fields: ["title": "Write"]))
        try await document.edit(.add(record: "b", fields: ["title": "Edit", "due": "Friday"]))
        try await document.edit(.add(record: "c", fields: [:]))
        try await document.save()
        let old = await document.model
        fixture.clock.advance(byMilliseconds: Self.pastWindow)
        try await document.edit(.remove(record: "a"))
        try await document.edit(.unset(record: "b", field: "due"))
        try await document.edit(.insert(record: "a", fields: ["title": "Rewrite"], at: 2))
        try await document.edit(.add(record: "d", fields: ["x": "y"]))
        try await document.save()
        try await document.restore(try #require(try await document.history().first))
        #expect(await document.model == old)
        try await document.undo()
        #expect(await document.model.ids == ["b", "c", "a", "d"])
    }
}
