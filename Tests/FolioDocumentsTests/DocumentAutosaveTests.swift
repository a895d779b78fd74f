import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Autosave and group commits driven by an injected clock: the test moves the clock and calls `runDueWork()`.
@Suite struct DocumentAutosaveTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    var file: URL { fixture.documentFile("Notes.txt") }

    @Test func anIdleDocumentIsSavedAfterTheIdleInterval() async throws {
        let policy = AutosavePolicy(
            idleInterval: 5_000, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 1_000)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("draft"))

        fixture.clock.advance(byMilliseconds: 999)
        try await document.runDueWork()
        #expect(try library.edits(of: document.id).isEmpty, "the group is younger than the grouping interval")

        fixture.clock.advance(byMilliseconds: 1)
        try await document.runDueWork()
        #expect(try library.edits(of: document.id).count == 1, "an idle group is committed")
        #expect(!Disk.exists(file))

        fixture.clock.advance(byMilliseconds: 3_999)
        try await document.runDueWork()
        #expect(!Disk.exists(file), "not yet idle long enough")
        #expect(await document.hasUnsavedChanges)

        fixture.clock.advance(byMilliseconds: 1)
        try await document.runDueWork()
        #expect(try fixture.text(at: file) == "draft")
        #expect(await document.hasUnsavedChanges == false)

        // Nothing unsaved: nothing more is written.
        let written = try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date
        fixture.clock.advance(byMilliseconds: 60_000)
        try await document.runDueWork()
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date == written)
    }

    @Test func eachEditPostponesTheIdleSave() async throws {
        let policy = AutosavePolicy(
            idleInterval: 5_000, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 0)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        for _ in 0..<5 {
            try await document.edit(.append("."))
            fixture.clock.advance(byMilliseconds: 4_000)
            try await document.runDueWork()
            #expect(!Disk.exists(file))
        }
        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.runDueWork()
        #expect(try fixture.text(at: file) == ".....")
    }

    @Test func manyUnsavedChangesAreSavedWithoutWaiting() async throws {
        let policy = AutosavePolicy(idleInterval: nil, unsavedChangeLimit: 3, saveOnClose: false, groupingInterval: 0)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.edit(.append("b"))
        #expect(!Disk.exists(file))
        try await document.edit(.append("c"))
        #expect(try fixture.text(at: file) == "abc", "the third change reached the limit")
        #expect(await document.changeCount == 0)
        try await document.edit(.append("d"))
        try await document.edit(.append("e"))
        #expect(try fixture.text(at: file) == "abc")
        try await document.edit(.append("f"))
        #expect(try fixture.text(at: file) == "abcdef")
    }

    @Test func theChangeLimitCountsAnOpenGroup() async throws {
        let policy = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: 2, saveOnClose: false, groupingInterval: 1_000)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        fixture.clock.advance(byMilliseconds: 2_000)
        try await document.edit(.append("b"))
        // One committed change and one open group make two: the save commits the group and writes both.
        #expect(try fixture.text(at: file) == "ab")
        #expect(try library.edits(of: document.id).count == 2)
    }

    @Test func nothingIsSavedWhenThePolicySaysNever() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        for _ in 0..<200 { try await document.edit(.append("x")) }
        fixture.clock.advance(byMilliseconds: 24 * 3_600_000)
        try await document.runDueWork()
        try await document.close()
        #expect(!Disk.exists(file))
        #expect(try await fixture.library().open(document.id, as: TextDocument.self).model.text.count == 200)
    }

    @Test func closeSavesUnderTheSaveOnClosePolicy() async throws {
        let policy = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: true, groupingInterval: 1_000)
        let library = try fixture.library(autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("typed just before closing"))
        try await document.close()
        #expect(try fixture.text(at: file) == "typed just before closing")
        #expect(try library.edits(of: document.id).count == 1)
    }

    @Test func closingAnUnchangedDocumentDoesNotRewriteIt() async throws {
        let policy = AutosavePolicy(idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: true, groupingInterval: 0)
        let injector = FaultInjectingFileSystem()
        let library = try fixture.library(fileSystem: injector, autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("a"))
        try await document.save()
        let steps = injector.stepCount
        try await document.close()
        #expect(injector.stepCount == steps)
    }

    @Test func aFailedAutosaveSetsTheStateAndTheNextOneRecovers() async throws {
        // Steps 0-3 are the first save; step 5 is the fsync of the second save's temporary file.
        let injector = FaultInjectingFileSystem(faults: [.fail(atStep: 5, with: .ioError)])
        let policy = AutosavePolicy(
            idleInterval: 1_000, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 0)
        let library = try fixture.library(fileSystem: injector, autosave: policy)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.runDueWork()
        #expect(try fixture.text(at: file) == "one")

        try await document.edit(.append(" two"))
        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.runDueWork()  // A failed autosave does not throw.
        #expect(await document.state == .savingError)
        #expect(try fixture.text(at: file) == "one")
        #expect(await document.hasUnsavedChanges)

        fixture.clock.advance(byMilliseconds: 1_000)
        try await document.runDueWork()
        #expect(await document.state == .normal)
        #expect(try fixture.text(at: file) == "one two")
        #expect(await document.hasUnsavedChanges == false)
    }
}

/// The same work on the document's own timer, with the system clock: it wakes at deadlines, not to poll.
@Suite struct DocumentDeadlineTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A library on the system clock with its documents' timers running (groups of 0.3 s), and a new document.
    func notes(idleInterval: Int64) async throws -> (DocumentLibrary, Document<TextDocument>) {
        let policy = AutosavePolicy(
            idleInterval: idleInterval, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 300)
        let library = try DocumentLibrary(
            at: directory.subdirectory("library"), deviceName: "Timer", autosave: policy, backgroundWork: true)
        return (library, try await library.create(TextDocument.self, named: "Notes"))
    }

    /// Whether `condition` holds within `limit`, looking every 20 ms.
    func holds(within limit: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while try await !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    @Test func theTimerWakesAtDeadlinesAndSleepsWhileNothingIsDue() async throws {
        let (library, document) = try await notes(idleInterval: 600)
        // Nothing due: a second passes without a wake-up (a 250 ms poll would have woken four times).
        try await Task.sleep(for: .seconds(1))
        #expect(await document.timerWakeUps == 0)

        try await document.edit(.append("draft"))
        #expect(
            try await holds(within: .seconds(30)) { await !document.hasUnsavedChanges },
            "the group committed and the idle document saved within 30 s")
        #expect(try library.edits(of: document.id).count == 1)
        let wakeUps = await document.timerWakeUps
        #expect((1...4).contains(wakeUps), "about one wake-up a deadline (the commit, the save): \(wakeUps)")
        // Saved: nothing is due, and the timer sleeps again.
        try await Task.sleep(for: .seconds(1))
        #expect(await document.timerWakeUps == wakeUps)
        try await document.close()
    }

    /// A timer armed for the idle save (30 s away) is woken by an edit whose group is due sooner (0.3 s).
    @Test func anEditWakesATimerArmedForALaterDeadline() async throws {
        // The idle save is two minutes away: a lost wake-up would commit the second group only then, while a
        // machine loaded by the whole suite in parallel has been seen to take 25 s for the woken commit.
        let (library, document) = try await notes(idleInterval: 120_000)
        func waitForEdits(_ count: Int, within limit: Duration) async throws -> Bool {
            try await holds(within: limit) { try library.edits(of: document.id).count >= count }
        }
        try await document.edit(.append("one"))
        #expect(try await waitForEdits(1, within: .seconds(60)), "the first group committed")
        // The timer now sleeps until the idle save; the second group is due 0.3 s after its edit.
        let edited = ContinuousClock.now
        try await document.edit(.append(" two"))
        #expect(try await waitForEdits(2, within: .seconds(60)), "the second group committed before the idle save")
        #expect(ContinuousClock.now - edited < .seconds(60))
        try await document.close()
    }
}
