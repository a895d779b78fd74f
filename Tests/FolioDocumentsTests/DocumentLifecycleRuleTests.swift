import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// The fixed rules for lifecycle events made apart: an edit beats a delete, concurrent renames settle by latest
/// wins, and a move concurrent with an edit keeps both.
@Suite struct DocumentLifecycleRuleTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 1)
        mac = try LibraryFixture(seed: 2)
    }

    func shared() async throws -> (DocumentLibrary, Document<TextDocument>, DocumentLibrary, Document<TextDocument>) {
        let a = try iPad.library()
        let b = try mac.library()
        let onA = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "base\n"))
        try exchange(a, b, onA.id)
        return (a, onA, b, try await b.open(onA.id, as: TextDocument.self))
    }

    @Test func anEditConcurrentWithADeleteWinsAndTheDocumentStays() async throws {
        let (a, onA, b, onB) = try await shared()
        try await onA.close()
        try await a.delete(onA.id)
        try await onB.edit(.append("edited on the Mac\n"))
        try exchange(a, b, onA.id)

        for library in [a, b] {
            let info = try #require(try await library.info(of: onA.id))
            #expect(!info.isDeleted, "the edit wins")
            #expect(info.restoredByConcurrentEdit)
        }
        let reopened = try await a.open(onA.id, as: TextDocument.self)
        #expect(await !reopened.state.contains(.inConflict), "a delete changes no contents: nothing to choose")
        #expect(await reopened.model.text == "base\nedited on the Mac\n")
        // The next change joins the delete and the edit; the restore recorded with it keeps the document alive.
        try await reopened.edit(.append("after\n"))
        #expect(try a.store.heads(of: onA.id).count == 1)
        #expect(try await a.info(of: onA.id)?.isDeleted == false)
        #expect(try a.store.lifecycleChanges(of: onA.id).contains { $0.kind == .lifecycle(.restore) })
        try exchange(a, b, onA.id)
        #expect(try await b.info(of: onA.id)?.isDeleted == false)
        try a.store.checkInvariants()
    }

    @Test func editingAfterOwnDeleteWasOverruledDiscardsItAndRecordsTheRestore() async throws {
        let (a, onA, b, onB) = try await shared()
        // The iPad edits, then deletes its own version; the Mac, apart, edits more (its head is the later one).
        try await onA.edit(.append("iPad\n"))
        try await onA.close()
        try await a.delete(onA.id)
        for line in ["Mac 1\n", "Mac 2\n", "Mac 3\n"] { try await onB.edit(.append(line)) }
        try exchange(a, b, onA.id)
        let delete = try #require(try a.store.lifecycleChanges(of: onA.id).last)
        #expect(delete.kind == .lifecycle(.delete))
        #expect(try await a.info(of: onA.id)?.restoredByConcurrentEdit == true)

        let reopened = try await a.open(onA.id, as: TextDocument.self)
        #expect(await reopened.model.text == "base\nMac 1\nMac 2\nMac 3\n", "the later version is shown")
        // The delete carries the iPad's own contents, so it competes; editing the version shown discards it, and
        // the restore recorded in the same transaction says the Mac's edit overruled the delete.
        try await reopened.edit(.append("after\n"))
        let changes = try a.store.changes(of: onA.id, since: VersionVector())
        let resolution = try #require(changes.first { if case .resolution = $0.kind { true } else { false } })
        guard case .resolution(let settled) = resolution.kind else { return }
        #expect(settled.strategy == .userChoice)
        #expect(settled.discarded == [delete.hash])
        #expect(changes.last?.kind == .lifecycle(.restore))
        #expect(try a.store.heads(of: onA.id).count == 1)
        #expect(try await a.info(of: onA.id)?.restoredByConcurrentEdit == false)

        let ledger = try await reopened.lossLedger()
        #expect(
            ledger.map { $0.discarded.map(\.contents.text) } == [["base\niPad\n"]],
            "the iPad's version is listed as lost")
        try exchange(a, b, onA.id)
        #expect(try await b.info(of: onA.id)?.isDeleted == false)
        #expect(try await b.info(of: onA.id)?.restoredByConcurrentEdit == false)
        #expect(try b.store.heads(of: onA.id) == a.store.heads(of: onA.id))
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }

    @Test func aDeleteSeenByEveryoneStaysDeleted() async throws {
        let (a, onA, b, onB) = try await shared()
        try await onB.close()
        try await onA.close()
        try await a.delete(onA.id)
        try exchange(a, b, onA.id)
        #expect(try await b.info(of: onA.id)?.isDeleted == true)
        #expect(try await b.documents().isEmpty)
        #expect(try await b.documents(includingDeleted: true).map(\.id) == [onA.id])
    }

    @Test func concurrentRenamesSettleByLatestWins() async throws {
        let (a, onA, b, _) = try await shared()
        try await a.rename(onA.id, to: "From the iPad")
        mac.clock.advance(byMilliseconds: 60_000)
        try await b.rename(onA.id, to: "From the Mac")
        try exchange(a, b, onA.id)
        #expect(try await a.info(of: onA.id)?.displayName == "From the Mac")
        #expect(try await b.info(of: onA.id)?.displayName == "From the Mac")
    }

    @Test func aMoveConcurrentWithAnEditKeepsBoth() async throws {
        let (a, onA, b, onB) = try await shared()
        try await onA.close()
        try await a.move(onA.id, to: .shared)
        try await onB.edit(.append("edited\n"))
        try await onB.close()
        try exchange(a, b, onA.id)
        let moved = try await a.open(onA.id, as: TextDocument.self)
        #expect(try await a.info(of: onA.id)?.container == .shared, "the move holds")
        #expect(await moved.model.text == "base\nedited\n", "and so does the edit")
        #expect(await !moved.state.contains(.inConflict), "a move changes no contents, so there is nothing to choose")
    }
}
