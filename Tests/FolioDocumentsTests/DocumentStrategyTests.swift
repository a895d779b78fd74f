import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// The library's conflict policy settles competing versions as they appear.
@Suite struct DocumentStrategyTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 1)
        mac = try LibraryFixture(seed: 2)
    }

    func library(_ fixture: LibraryFixture, _ policy: ConflictPolicy) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers,
            autosave: .manual, conflictPolicy: policy, backgroundWork: false)
    }

    /// A document with `base` on both devices, then `onIPad` and `onMac` made apart, exchanged; the iPad refreshes.
    func conflict(
        _ policy: ConflictPolicy, base: String, onIPad: TextDocument.Operation, onMac: TextDocument.Operation
    ) async throws -> (DocumentLibrary, Document<TextDocument>) {
        let a = try library(iPad, policy)
        let b = try library(mac, ConflictPolicy())
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: base))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        try await first.edit(onIPad)
        mac.clock.advance(byMilliseconds: 10_000)
        try await second.edit(onMac)
        try exchange(a, b, first.id)
        try await first.refresh()
        return (a, first)
    }

    @Test func latestWinsKeepsTheLatestByWallTimeAndRecordsTheLoser() async throws {
        let (a, document) = try await conflict(
            ConflictPolicy(default: .latestWins), base: "a\n", onIPad: .append("iPad\n"), onMac: .append("Mac\n"))
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text == "a\nMac\n", "the Mac's edit is ten seconds later")
        let head = try #require(try a.store.heads(of: document.id).first)
        guard case .resolution(let resolution) = head.kind else {
            Issue.record("no resolution")
            return
        }
        #expect(resolution.strategy == .latestWins)
        #expect(resolution.discarded.count == 1)
        try a.store.checkInvariants()
    }

    @Test func mergeCombinesEditsToDifferentLines() async throws {
        let (a, document) = try await conflict(
            ConflictPolicy(default: .merge), base: "one\ntwo\nthree\n",
            onIPad: .replace("ONE\ntwo\nthree\n"), onMac: .replace("one\ntwo\nTHREE\n"))
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text == "ONE\ntwo\nTHREE\n")
        // Merged character by character without an overlap: nothing to decide, so nothing recorded; the two edits
        // stay the heads until the next edit is made on both.
        let heads = try a.store.heads(of: document.id)
        #expect(heads.count == 2)
        #expect(heads.allSatisfy { if case .edit = $0.kind { true } else { false } })
        #expect(try await document.lossLedger().isEmpty)
    }

    /// Two devices settled one conflict differently (each kept its own version): the versions now differ only in
    /// how the same edits were settled. Merging them again would add nothing and, on devices that merged apart,
    /// could disagree forever; the version made last is kept instead, and both devices keep the same one.
    @Test func mergingSettlementsOfTheSameEditsKeepsTheLatest() async throws {
        let a = try library(iPad, ConflictPolicy())
        let b = try library(mac, ConflictPolicy())
        let onIPad = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "a\n"))
        try exchange(a, b, onIPad.id)
        let onMac = try await b.open(onIPad.id, as: TextDocument.self)
        try await onIPad.edit(.append("iPad\n"))
        mac.clock.advance(byMilliseconds: 10_000)
        try await onMac.edit(.append("Mac\n"))
        let own = [
            try #require(try a.store.heads(of: onIPad.id).first), try #require(try b.store.heads(of: onIPad.id).first),
        ]
        try exchange(a, b, onIPad.id)
        for (document, head) in zip([onIPad, onMac], own) {
            try await document.refresh()
            try await document.resolve(.version(head.hash))
        }
        #expect(await onIPad.model.text == "a\niPad\n")
        #expect(await onMac.model.text == "a\nMac\n")
        try exchange(a, b, onIPad.id)

        for (library, document) in [(a, onIPad), (b, onMac)] {
            try await document.refresh()
            #expect(await document.state.contains(.inConflict), "the two choices compete")
            let result = try #require(try await document.resolveByMerging())
            #expect(result.isClean)
            #expect(result.merged.text == "a\nMac\n", "the Mac's edit is ten seconds later")
            let head = try #require(try library.store.heads(of: document.id).first)
            guard case .resolution(let resolution) = head.kind else {
                Issue.record("no resolution")
                return
            }
            #expect(resolution.strategy == .latestWins)
            #expect(resolution.discarded.count == 1)
        }
        try exchange(a, b, onIPad.id)
        for document in [onIPad, onMac] {
            try await document.refresh()
            #expect(await !document.state.contains(.inConflict), "both kept the same version")
            #expect(await document.model.text == "a\nMac\n")
        }
    }

    /// One word replaced differently on two devices is a conflict: both replacements delete the word, so `merge`
    /// records nothing and leaves the versions competing; the merge shows the word's place and a candidate with the
    /// first version's word, never the two interleaved.
    @Test func oneWordReplacedApartWaitsForAPerson() async throws {
        let (a, document) = try await conflict(
            ConflictPolicy(default: .merge), base: "one two\n", onIPad: .replace("uno two\n"),
            onMac: .replace("eins two\n"))
        #expect(await document.state.contains(.inConflict))
        let heads = try a.store.heads(of: document.id)
        #expect(heads.count == 2)
        #expect(heads.allSatisfy { if case .edit = $0.kind { true } else { false } }, "a resolution was recorded")
        let versions = try await document.versions()
        let merge = try #require(try await document.resolveByMerging())
        #expect(!merge.isClean)
        let conflict = try #require(merge.conflicts.first)
        #expect(merge.conflicts.count == 1)
        #expect(conflict.location == "line 1, characters 1–3")
        #expect(conflict.base == "one")
        #expect(conflict.values == versions.map { String($0.contents.text.prefix { $0 != " " }) })
        #expect(merge.merged.text == versions[0].contents.text, "the candidate shows the first version's word")
        #expect(try a.store.heads(of: document.id).count == 2, "merging recorded something")
        try a.store.checkInvariants()
    }

    @Test func keepBothTurnsTheOtherVersionIntoANewDocument() async throws {
        let (a, document) = try await conflict(
            ConflictPolicy(default: .keepBoth), base: "a\n", onIPad: .append("iPad\n"), onMac: .append("Mac\n"))
        #expect(await !document.state.contains(.inConflict))
        let current = await document.model.text
        let names = try await a.documents().map(\.displayName)
        let copyName = try #require(names.first { $0.hasPrefix("Notes (conflict from ") })
        let copy = try await a.open(named: copyName, as: TextDocument.self)
        #expect(Set([current, await copy.model.text]) == ["a\niPad\n", "a\nMac\n"], "both versions are kept")
        try a.store.checkInvariants()
    }

    @Test func aTypeOverrideBeatsTheDefault() async throws {
        let policy = ConflictPolicy(default: .askUser, overrides: [TextDocument.documentType.identifier: .latestWins])
        #expect(policy.strategy(for: TextDocument.documentType) == .latestWins)
        #expect(policy.strategy(for: PagesDocument.documentType) == .askUser)
        let (_, document) = try await conflict(policy, base: "a\n", onIPad: .append("iPad\n"), onMac: .append("Mac\n"))
        #expect(await !document.state.contains(.inConflict))
    }

    @Test func aCustomResolverDecides() async throws {
        let (_, document) = try await conflict(
            ConflictPolicy(), base: "a\n", onIPad: .append("iPad\n"), onMac: .append("Mac\n"))
        #expect(await document.state.contains(.inConflict))
        try await document.setConflictResolver { versions in
            TextDocument(text: versions.map(\.contents.text).sorted().joined())
        }
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text == "a\nMac\na\niPad\n", "sorted: uppercase first")
    }
}
