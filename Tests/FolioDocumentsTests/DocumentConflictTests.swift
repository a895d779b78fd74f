import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Two devices editing one document apart: competing versions surface the same way on both, and a resolution
/// settles them everywhere.
@Suite struct DocumentConflictTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 1)
        mac = try LibraryFixture(seed: 2)
    }

    /// "Notes" with "shared line\n" on both devices, then an edit on the iPad that the Mac has not seen.
    func diverging() async throws -> (DocumentLibrary, Document<TextDocument>, DocumentLibrary, Document<TextDocument>)
    {
        let a = try iPad.library()
        let b = try mac.library()
        let onA = try await a.create(
            TextDocument.self, named: "Notes", in: .shared, contents: TextDocument(text: "shared line\n"))
        try exchange(a, b, onA.id)
        let onB = try await b.open(onA.id, as: TextDocument.self)
        try await onA.edit(.append("from the iPad\n"))
        return (a, onA, b, onB)
    }

    /// "Notes" with "shared line\n" on both devices, then one offline edit on each.
    func conflicted() async throws -> (DocumentLibrary, Document<TextDocument>, DocumentLibrary, Document<TextDocument>)
    {
        let (a, onA, b, onB) = try await diverging()
        mac.clock.advance(byMilliseconds: 5_000)
        try await onB.edit(.append("from the Mac\n"))
        try exchange(a, b, onA.id)
        try await onA.refresh()
        try await onB.refresh()
        return (a, onA, b, onB)
    }

    @Test func concurrentEditsSurfaceTheSameVersionsOnBothDevices() async throws {
        let (a, onA, b, onB) = try await conflicted()
        #expect(await onA.state.contains(.inConflict))
        #expect(await onB.state.contains(.inConflict))
        let versionsA = try await onA.versions()
        let versionsB = try await onB.versions()
        #expect(versionsA.count == 2)
        #expect(try await onA.versionCount() == 2)
        #expect(try await onB.versionCount() == versionsB.count)
        #expect(versionsA.map(\.id) == versionsB.map(\.id), "the same versions, current first, on every device")
        #expect(versionsA[0].isCurrent && !versionsA[0].isConflict)
        #expect(versionsA[1].isConflict && !versionsA[1].isResolved)
        #expect(await onA.model.text == onB.model.text, "both show the same current version")
        let texts = Set(versionsA.map(\.contents.text))
        #expect(texts == ["shared line\nfrom the iPad\n", "shared line\nfrom the Mac\n"])
        #expect(try await onA.unresolvedConflictVersions().count == 1)
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }

    @Test func aCompetingVersionThatKeepsGrowingShowsItsLatestStateAtEveryRefresh() async throws {
        let (a, onA, b, onB) = try await diverging()
        // The Mac goes on editing its own line without looking at what arrives; at every refresh the iPad sees the
        // Mac's version grow (computed from the state it knew, or replayed: the same either way).
        var macText = "shared line\n"
        for round in 1...3 {
            mac.clock.advance(byMilliseconds: 5_000)
            try await onB.edit(.append("Mac \(round)\n"))
            macText += "Mac \(round)\n"
            try exchange(a, b, onA.id)
            try await onA.refresh()
            #expect(
                Set(try await onA.versions().map(\.contents.text)) == ["shared line\nfrom the iPad\n", macText],
                "round \(round)")
            #expect(await onA.state.contains(.inConflict))
        }
        try await onB.refresh()
        #expect(await onA.model.text == onB.model.text, "both show the same version")
        #expect(Set(try await onB.versions().map(\.contents.text)) == ["shared line\nfrom the iPad\n", macText])
        // A fresh open replays from the log and agrees with what the refreshes computed.
        let reopened = try await a.open(onA.id, as: TextDocument.self)
        #expect(Set(try await reopened.versions().map(\.contents.text)) == ["shared line\nfrom the iPad\n", macText])
        #expect(await reopened.model.text == onA.model.text)
    }

    @Test func eachVersionCarriesItsDiffAgainstTheCommonAncestor() async throws {
        let (_, onA, _, onB) = try await conflicted()
        #expect(try await onA.commonAncestor().text == "shared line\n")
        for document in [onA, onB] {
            for version in try await document.versions() {
                #expect(version.ancestor.text == "shared line\n")
                let added = version.contents.text.hasSuffix("from the iPad\n") ? "from the iPad\n" : "from the Mac\n"
                #expect(
                    version.changes == [
                        ContentChange(location: "after line 1", kind: .added, base: [], version: [added])
                    ])
            }
        }
    }

    @Test func renamingOrMovingDuringAConflictSettlesNothing() async throws {
        let (a, onA, b, onB) = try await conflicted()
        let before = try await onA.versions().map(\.contents.text)
        try await a.rename(onA.id, to: "Renamed")
        try await b.move(onB.id, to: .shared)
        try exchange(a, b, onA.id)
        try await onA.refresh()
        try await onB.refresh()
        for document in [onA, onB] {
            #expect(await document.state.contains(.inConflict), "a catalog change is not a resolution")
            #expect(try await document.versions().map(\.contents.text) == before)
            #expect(await document.info.displayName == "Renamed")
            #expect(await document.info.container == .shared)
        }
        #expect(await onA.model.text == onB.model.text)
        try await onA.edit(.append("after\n"))
        try exchange(a, b, onA.id)
        try await onB.refresh()
        #expect(await onA.model.text == onB.model.text, "an edit made on the version shown replays the same everywhere")
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }

    @Test func withoutAConflictTheAncestorIsTheCurrentState() async throws {
        let library = try iPad.library()
        let notes = try await library.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "a\n"))
        #expect(try await notes.commonAncestor().text == "a\n")
        #expect(try await notes.currentVersion().changes.isEmpty)
    }

    @Test func choosingAVersionResolvesItEverywhereAndRecordsTheLoss() async throws {
        let (a, onA, b, onB) = try await conflicted()
        let loser = try await onA.versions().first { $0.contents.text.contains("iPad") }!
        let winner = try await onA.versions().first { $0.contents.text.contains("Mac") }!
        try await onA.replace(with: winner)
        #expect(await !onA.state.contains(.inConflict))
        #expect(await onA.model.text == "shared line\nfrom the Mac\n")
        let resolution = try #require(try a.store.heads(of: onA.id).first)
        guard case .resolution(let record) = resolution.kind else {
            Issue.record("the head is not a resolution: \(resolution.kind)")
            return
        }
        #expect(record.strategy == .userChoice)
        #expect(record.chosen == [winner.id])
        #expect(record.discarded == [loser.id], "the loss is recorded")
        #expect(Set(resolution.parents) == [winner.id, loser.id], "made on every competing head")
        let ledger = try await onA.lossLedger()
        #expect(ledger.count == 1)
        #expect(ledger.first?.strategy == .userChoice)
        #expect(
            ledger.first?.discarded.map(\.contents.text) == ["shared line\nfrom the iPad\n"],
            "what was discarded is listed")
        #expect(ledger.first?.discarded.first?.device.name == "Test Device")

        try exchange(a, b, onA.id)
        try await onB.refresh()
        #expect(await !onB.state.contains(.inConflict))
        #expect(await onB.model.text == "shared line\nfrom the Mac\n")
        try a.store.checkInvariants()
        try b.store.checkInvariants()
    }

    @Test func resolvingTheSameWayOnBothDevicesConvergesQuietly() async throws {
        let (a, onA, b, onB) = try await conflicted()
        try await onA.resolve(.latest)
        try await onB.resolve(.latest)
        try exchange(a, b, onA.id)
        try await onA.refresh()
        try await onB.refresh()
        #expect(try a.store.heads(of: onA.id).count == 2, "two resolutions, one state")
        #expect(await !onA.state.contains(.inConflict), "equal versions are no conflict")
        #expect(try await onA.versionCount() == 1, "two equal heads are one version")
        #expect(await !onB.state.contains(.inConflict))
        #expect(await onA.model.text == "shared line\nfrom the Mac\n", "the Mac's edit is the latest by wall time")
        // The next edit is made on both equal heads, so they do not linger.
        try await onA.edit(.append("after\n"))
        #expect(try a.store.heads(of: onA.id).count == 1)
        try a.store.checkInvariants()
    }

    @Test func resolvingDifferentlyIsANewConflictAndLosesNothing() async throws {
        let (a, onA, b, onB) = try await conflicted()
        let iPadVersion = try await onA.versions().first { $0.contents.text.contains("iPad") }!
        let macVersion = try await onB.versions().first { $0.contents.text.contains("Mac") }!
        try await onA.replace(with: iPadVersion)
        try await onB.replace(with: macVersion)
        try exchange(a, b, onA.id)
        try await onA.refresh()
        try await onB.refresh()
        #expect(await onA.state.contains(.inConflict))
        let texts = Set(try await onA.versions().map(\.contents.text))
        #expect(texts == ["shared line\nfrom the iPad\n", "shared line\nfrom the Mac\n"], "both edits are still there")
        #expect(try await onA.versions().map(\.id) == onB.versions().map(\.id))
    }

    @Test func newContentsSettleTheConflict() async throws {
        let (a, onA, _, _) = try await conflicted()
        try await onA.resolve(with: TextDocument(text: "shared line\nfrom the iPad\nfrom the Mac\n"))
        #expect(await !onA.state.contains(.inConflict))
        #expect(await onA.model.text == "shared line\nfrom the iPad\nfrom the Mac\n")
        try await onA.close()
        let reopened = try await a.open(onA.id, as: TextDocument.self)
        #expect(await reopened.model.text == "shared line\nfrom the iPad\nfrom the Mac\n")
        #expect(await !reopened.state.contains(.inConflict))
    }

    /// A person's own merge keeps every version as an input of the merge: nothing is discarded.
    @Test func anAppsMergeIsLedgeredAsAMergeOfEveryVersion() async throws {
        let (_, onA, _, onB) = try await conflicted()
        let versions = try await onA.versions().map(\.id)
        try await onA.resolve(with: TextDocument(text: "shared line\nfrom the iPad\nfrom the Mac\n"))
        let record = try #require(try await onA.lossLedger().last)
        #expect(record.strategy == .appMerge)
        #expect(record.discarded.isEmpty)
        #expect(record.chosen == versions.sorted())
        guard case .resolution(let resolution) = record.resolution.kind else {
            Issue.record("the ledger's entry is not a resolution")
            return
        }
        #expect(resolution.chosen == versions.sorted())
        _ = onB
    }

    @Test func anUnknownVersionIsRefused() async throws {
        let (_, onA, _, _) = try await conflicted()
        await #expect(throws: DocumentError.self) {
            try await onA.resolve(.version(ChangeHash(hashing: [1, 2, 3])))
        }
        #expect(await onA.state.contains(.inConflict))
    }
}
