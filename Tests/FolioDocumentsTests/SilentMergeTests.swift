import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Synchronization
import Testing

@testable import FolioDocuments

/// Typing together is not a conflict: under `merge`, versions of a text that merge character by character without
/// overlapping show merged, and nothing is recorded until the next edit, which is made on all of them.
@Suite struct SilentMergeTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 41)
        mac = try LibraryFixture(seed: 42)
    }

    func library(_ fixture: LibraryFixture, policy: ConflictStrategy = .merge) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: policy),
            backgroundWork: false)
    }

    /// Two open documents on two devices, after each typed apart at its own place and the logs were exchanged.
    func typedApart(policy: ConflictStrategy = .merge) async throws -> (
        a: DocumentLibrary, b: DocumentLibrary, first: Document<TextDocument>, second: Document<TextDocument>
    ) {
        let a = try library(iPad, policy: policy)
        let b = try library(mac, policy: policy)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one\ntwo\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        try await first.edit(.insert(at: 0, text: "A"))
        try await second.edit(.insert(at: 8, text: "B"))
        try exchange(a, b, first.id)
        try await first.refresh()
        try await second.refresh()
        return (a, b, first, second)
    }

    /// Naming a version while a silent merge shows must not make one head the document's only version: the name is
    /// made on this device's line, as a rename is, and both devices keep showing every character typed.
    @Test func namingAVersionWhileAMergeShowsKeepsEveryCharacter() async throws {
        let (a, b, first, second) = try await typedApart()
        let named = try await first.markVersion("Both lines")
        #expect(await first.model.text == "Aone\ntwo\nB")
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await second.model.text == "Aone\ntwo\nB")
        #expect(await !second.state.contains(.inConflict))
        #expect(try await second.history().contains { $0.id == named.id && $0.name == "Both lines" })
        try await first.edit(.append("!"))
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await first.model.text == "Aone\ntwo\nB!")
        #expect(await second.model.text == "Aone\ntwo\nB!")
        #expect(try await first.lossLedger().isEmpty)
    }

    @Test func editsThatMergeLeaveNoResolutionAndNoConflict() async throws {
        let (a, b, first, second) = try await typedApart()
        for (library, document) in [(a, first), (b, second)] {
            #expect(await document.model.text == "Aone\ntwo\nB")
            #expect(await !document.state.contains(.inConflict))
            #expect(try await document.versions().count == 1)
            #expect(try await document.conflictHistory().isEmpty)
            #expect(try await document.lossLedger().isEmpty)
            // Nothing was appended for the merge: the two edits are the heads.
            let heads = try library.store.heads(of: first.id)
            #expect(heads.count == 2)
            #expect(heads.allSatisfy { if case .edit = $0.kind { true } else { false } })
        }
    }

    @Test func theNextEditIsTheMerge() async throws {
        let (a, b, first, second) = try await typedApart()
        let before = try Set(a.store.heads(of: first.id).map(\.hash))
        try await first.edit(.insert(at: 4, text: "!"))
        #expect(await first.model.text == "Aone!\ntwo\nB")
        let heads = try a.store.heads(of: first.id)
        let edit = try #require(heads.first)
        #expect(heads.count == 1)
        #expect(Set(edit.parents) == before)
        guard case .edit(let made) = edit.kind else {
            Issue.record("the merge is not an edit")
            return
        }
        #expect(made.isMadeOnMerge)
        // The other device replays the edit on the same merge; so does a document opened from the log.
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await second.model.text == "Aone!\ntwo\nB")
        try await first.close()
        let reopened = try await a.open(first.id, as: TextDocument.self)
        #expect(await reopened.model.text == "Aone!\ntwo\nB")
        #expect(
            try a.store.changes(of: first.id, since: VersionVector()).allSatisfy {
                if case .resolution = $0.kind { false } else { true }
            })
    }

    /// Undo of an edit made on a merge takes back that edit only, and the undo syncs.
    @Test func anEditMadeOnAMergeUndoes() async throws {
        let (a, b, first, second) = try await typedApart()
        try await first.edit(.insert(at: 4, text: "!"))
        try await first.undo()
        #expect(await first.model.text == "Aone\ntwo\nB")
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await second.model.text == "Aone\ntwo\nB")
        #expect(try a.store.heads(of: first.id).count == 1)
    }

    /// Typing goes on at both devices, each edit made on what arrived: no resolution is ever appended, and both
    /// end with the same text, every keystroke in it.
    @Test func keystrokesExchangedAsTheyAreTypedNeverResolve() async throws {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "|\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        for round in 0..<40 {
            // The iPad types before the line's end, the Mac at the start: never at one place.
            try await first.edit(.insert(at: await first.model.text.unicodeScalars.count - 1, text: "a"))
            try await second.edit(.insert(at: 0, text: "b"))
            if round % 3 != 2 { try exchange(a, b, first.id) }
            try await first.refresh()
            try await second.refresh()
        }
        try exchange(a, b, first.id)
        try await first.refresh()
        try await second.refresh()
        let text = await first.model.text
        #expect(await second.model.text == text)
        #expect(text == String(repeating: "b", count: 40) + "|" + String(repeating: "a", count: 40) + "\n")
        let log = try a.store.changes(of: first.id, since: VersionVector())
        #expect(!log.contains { if case .resolution = $0.kind { true } else { false } })
        #expect(try await first.conflictHistory().isEmpty)
    }

    /// Edits that overlap (the same word replaced two ways) still wait for a person: a decision is needed.
    @Test func overlappingEditsStillConflict() async throws {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "soy milk\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        try await first.edit([.delete(at: 0, count: 3), .insert(at: 0, text: "oat")])
        try await second.edit([.delete(at: 0, count: 3), .insert(at: 0, text: "almond")])
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(await first.state.contains(.inConflict))
        #expect(try await first.versions().count == 2)
    }

    /// Versions that overlap show, each, the text its device typed: the state at each head, which the document
    /// reads from the change graph its merge replays, is what that device's own edits made, with a silent merge in
    /// their past and as a device types on.
    @Test func competingVersionsShowWhatEachDeviceTyped() async throws {
        let (a, b, first, second) = try await typedApart()
        try await first.edit([.delete(at: 1, count: 3), .insert(at: 1, text: "oat")])
        try await second.edit([.delete(at: 1, count: 3), .insert(at: 1, text: "almond")])
        try await second.edit(.append("C"))
        var texts = [await first.model.text, await second.model.text]
        #expect(texts == ["Aoat\ntwo\nB", "Aalmond\ntwo\nBC"])
        try exchange(a, b, first.id)
        for document in [first, second] {
            try await document.refresh()
            #expect(await document.state.contains(.inConflict))
            #expect(try await document.versions().map(\.contents.text).sorted() == texts.sorted())
        }
        try await second.edit(.insert(at: 0, text: "D"))
        texts[1] = await second.model.text
        #expect(texts[1] == "DAalmond\ntwo\nBC")
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(try await first.versions().map(\.contents.text).sorted() == texts.sorted())
    }

    /// A library tells documents that are not open apart the same way: versions that merge silently do not
    /// compete, versions that overlap do; an open document answers as it shows itself.
    @Test func theLibraryTellsWhetherVersionsCompete() async throws {
        let (a, b, first, second) = try await typedApart()
        try await second.close()
        #expect(try await !b.hasCompetingVersions(first.id, as: TextDocument.self))
        #expect(try await !a.hasCompetingVersions(first.id))
        try await first.edit(.replace("oat\ntwo\nB"))
        let reopened = try await b.open(first.id, as: TextDocument.self)
        try await reopened.edit(.replace("rye\ntwo\nB"))
        try await reopened.close()
        try exchange(a, b, first.id)
        #expect(try await b.hasCompetingVersions(first.id, as: TextDocument.self))
        try await first.refresh()
        #expect(try await a.hasCompetingVersions(first.id))
    }

    /// Two devices that typed the same line apart are one version: merged with a third device's edit, that version
    /// counts once, so the merge is recorded (a resolution keeping one of its heads) rather than made silently, and
    /// every device shows the same text, the line once.
    @Test func aVersionReachedApartByTwoDevicesMergesOnce() async throws {
        let fixtures = [iPad, mac, try LibraryFixture(seed: 43)]
        let libraries = try fixtures.map { try library($0) }
        let first = try await libraries[0].create(TextDocument.self, named: "List", contents: TextDocument(text: ""))
        try exchange(libraries[0], libraries[1], first.id)
        try exchange(libraries[0], libraries[2], first.id)
        let second = try await libraries[1].open(first.id, as: TextDocument.self)
        let third = try await libraries[2].open(first.id, as: TextDocument.self)
        try await first.edit(.append("milk\n"))
        try await second.edit(.append("milk\n"))
        try await third.edit(.insert(at: 0, text: "done\n"))
        for _ in 0..<2 {
            for (a, b) in [(0, 1), (1, 2), (0, 2)] { try exchange(libraries[a], libraries[b], first.id) }
            for document in [first, second, third] { try await document.refresh() }
        }
        let texts = [await first.model.text, await second.model.text, await third.model.text]
        #expect(Set(texts).count == 1, "\(texts)")
        #expect(texts[0].components(separatedBy: "milk").count == 2, "\(texts[0])")
        try await third.edit(.insert(at: 0, text: "- "))
        for (a, b) in [(0, 2), (1, 2)] { try exchange(libraries[a], libraries[b], first.id) }
        for document in [first, second] { try await document.refresh() }
        let edited = await third.model.text
        #expect(await first.model.text == edited)
        #expect(await second.model.text == edited)
        // A device that replays the whole log shows the same.
        let late = try library(try LibraryFixture(seed: 44))
        try exchange(libraries[2], late, first.id)
        #expect(try await late.open(first.id, as: TextDocument.self).model.text == edited)
    }

    /// A delete made after an edit, concurrent with another device's edit: the edit keeps the document, and an edit
    /// made on the merge of the two records that it won (a restore), so no device finds the document deleted.
    @Test func typingOnAMergeWithADeleteKeepsTheDocument() async throws {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one\ntwo\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        try await second.edit(.insert(at: 8, text: "B"))
        try await second.close()
        try await b.delete(first.id)
        try await first.edit(.insert(at: 0, text: "A"))
        try exchange(a, b, first.id)
        try await first.refresh()
        try await first.edit(.insert(at: 1, text: "!"))
        try exchange(a, b, first.id)
        #expect(try await a.documents().contains { $0.id == first.id })
        #expect(try await b.documents().contains { $0.id == first.id })
        let reopened = try await b.open(first.id, as: TextDocument.self)
        #expect(await reopened.model.text == first.model.text)
    }

    /// A file saved before another device's typing arrived, then changed by another program: the baseline is made
    /// on what the file held, so the other device's typing, merged since, stays.
    @Test func aFileChangedOutsideKeepsTypingItNeverHeld() async throws {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one\ntwo\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        // Two changes: the iPad's version is the later, the one shown beside the merge.
        try await first.edit([.insert(at: 0, text: "A")])
        try await first.edit([.insert(at: 1, text: "a")])
        try await first.save()
        try await second.edit(.insert(at: 8, text: "B"))
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(await first.model.text == "Aaone\ntwo\nB")
        try Data("Aaone\nTWO\n".utf8).write(to: try await first.fileURL)
        try await first.save()
        #expect(await first.model.text == "Aaone\nTWO\nB")
    }

    /// Typing merged, saved, then the file changed by another program: the baseline is made on every head the
    /// saved file held, so nothing of the merge comes twice.
    @Test func aFileChangedOutsideAfterSavingAMergeHoldsItOnce() async throws {
        let (_, _, first, _) = try await typedApart()
        try await first.save()
        try Data("Aone\nTWO\nB".utf8).write(to: try await first.fileURL)
        try await first.save()
        #expect(await first.model.text == "Aone\nTWO\nB")
    }

    /// An app that sets a resolver while a merge shows gets the versions to settle itself.
    @Test func aResolverSetWhileAMergeShowsSettlesTheVersions() async throws {
        let (_, _, first, _) = try await typedApart()
        let seen = Mutex(0)
        try await first.setConflictResolver { versions in
            seen.withLock { $0 = versions.count }
            return TextDocument(text: "chosen\n")
        }
        #expect(seen.withLock { $0 } == 2)
        #expect(await first.model.text == "chosen\n")
    }

    /// Under any other strategy the policy picks, so the versions are a conflict it settles, as before.
    @Test func latestWinsStillRecordsItsChoice() async throws {
        let (a, _, first, _) = try await typedApart(policy: .latestWins)
        let head = try #require(try a.store.heads(of: first.id).first)
        guard case .resolution(let resolution) = head.kind else {
            Issue.record("latest wins recorded no choice")
            return
        }
        #expect(resolution.strategy == .latestWins)
    }
}
