import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

/// Text documents merge character by character from the change log.
@Suite struct CharacterMergeTests {
    static let traces = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // FolioDocumentsTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the package
        .appendingPathComponent("Benchmarks/traces")

    /// The friendsforever trace (`Benchmarks/traces/README.md`: josephg/editing-traces, CC BY 4.0) recorded as two
    /// devices' changes, each transaction an edit on its parents (on a merge of them when it names several): the
    /// document opens with exactly the trace's final text, then again from a checkpoint after more concurrent edits
    /// made on an empty edit that merged the trace's heads.
    @Test func friendsforeverOpensWithItsFinalText() async throws {
        let trace = try ConcurrentEditingTrace.load(Self.traces.appendingPathComponent("friendsforever.json.gz"))
        let fixture = try LibraryFixture(seed: 28)
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: "bench", clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
        let created = try await library.create(TextDocument.self, named: "friends")
        let id = created.id
        let root = try #require(try library.store.heads(of: id).first).hash
        try await created.close()
        // Concurrent inserts at one place fall in the order of their devices' ids: agent 0 gets the lowest, as in
        // the order the trace was recorded with.
        let authors = (0..<trace.agentCount).map { DeviceKey.named("agent \($0)").device(named: "agent \($0)") }
            .sorted { $0.id < $1.id }
        let heads = try trace.record(in: library.store, document: id, root: root, authors: authors)
        #expect(try library.store.changeCount() > trace.transactions.count)

        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text == trace.endContent)
        #expect(await !document.state.contains(.inConflict))
        // The open shows the heads the trace ends with merged, and records nothing.
        #expect(try Set(library.store.heads(of: id).map(\.hash)) == Set(heads))
        try await document.save()
        try await document.close()

        // Two agents type at once past a checkpoint: opening reads what follows it.
        try library.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([]), isMadeOnMerge: true))], to: id,
            on: .heads(heads), author: authors[0])
        let base = try #require(try library.store.heads(of: id).first)
        try library.store.checkpoints.save(
            of: id, at: base.vector, contents: TextDocument(text: trace.endContent).contents().encoded())
        try library.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([.insert(at: 0, text: "A: ")])))], to: id,
            on: .heads([base.hash]), author: authors[0])
        try library.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([.insert(at: 0, text: "B: ")])))], to: id,
            on: .heads([base.hash]), author: authors[1])
        let reopened = try await library.open(id, as: TextDocument.self)
        let text = await reopened.model.text
        #expect(text == "A: B: " + trace.endContent || text == "B: A: " + trace.endContent)
        try await reopened.close()
    }
}

/// Pages documents merge their text character by character; images changed apart the same way merge too, and
/// images changed apart differently wait for a person.
@Suite struct PagesCharacterMergeTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 11)
        mac = try LibraryFixture(seed: 12)
    }

    func library(_ fixture: LibraryFixture) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
    }

    /// Both devices edit one line of the text, apart, and the Mac adds an image: all of it merges.
    func edited(macImage: Data, iPadImage: Data?) async throws -> Document<PagesDocument> {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(
            PagesDocument.self, named: "Trip", contents: try PagesDocument(text: "Day 1: beach\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: PagesDocument.self)
        try await first.edit(.insertText(at: 12, text: " and sun"))
        if let iPadImage { try await first.edit(.putImage(name: "cover.png", bytes: iPadImage)) }
        try await second.edit(.insertText(at: 0, text: "Trip. "))
        try await second.edit(.putImage(name: "cover.png", bytes: macImage))
        try exchange(a, b, first.id)
        try await first.refresh()
        return first
    }

    @Test func textEditedApartOnOneLineMerges() async throws {
        let document = try await edited(macImage: Data([1, 2, 3]), iPadImage: nil)
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text == "Trip. Day 1: beach and sun\n")
        #expect(await document.model.images["cover.png"] == Data([1, 2, 3]))
    }

    /// One word of the text replaced two ways waits for a person, and the conflict names the text's member.
    @Test func oneWordOfTheTextReplacedTwoWaysWaitsForAPerson() async throws {
        let a = try library(iPad)
        let b = try library(mac)
        let first = try await a.create(
            PagesDocument.self, named: "Trip", contents: try PagesDocument(text: "Day 1: beach\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: PagesDocument.self)
        try await first.edit([.deleteText(at: 7, count: 5), .insertText(at: 7, text: "hills")])
        try await second.edit([.deleteText(at: 7, count: 5), .insertText(at: 7, text: "lake")])
        try exchange(a, b, first.id)
        try await first.refresh()
        #expect(await first.state.contains(.inConflict))
        let merge = try #require(try await first.resolveByMerging())
        #expect(merge.conflicts.map(\.location) == ["text.txt, line 1, characters 8–12"])
        #expect(merge.conflicts.first?.base == "beach")
    }

    @Test func imagesChangedApartDifferentlyWaitForAPerson() async throws {
        let document = try await edited(macImage: Data([1, 2, 3]), iPadImage: Data([9]))
        #expect(await document.state.contains(.inConflict))
    }
}

/// What two devices compute for one log must not depend on the checkpoints each happens to hold.
@Suite struct CharacterMergeDeterminismTests {
    func library(_ fixture: LibraryFixture, _ policy: ConflictPolicy = ConflictPolicy(default: .merge)) throws
        -> DocumentLibrary
    {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: policy, backgroundWork: false)
    }

    /// A second root (a device's first change made on no parent, which the store accepts) is not after anything:
    /// the walk back from the heads must not stop at a change merely because nothing else is pending then. The iPad
    /// holds a checkpoint at its own edit and the Mac does not; both must merge the same text, the stray root's
    /// insert at 4 (past the end of the empty text it was made on) skipped on both.
    @Test func aSecondRootMergesAlikeWithOrWithoutACheckpoint() async throws {
        let iPad = try LibraryFixture(seed: 31)
        let mac = try LibraryFixture(seed: 32)
        let a = try library(iPad)
        let b = try library(mac)
        let created = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "hello"))
        let id = created.id
        try exchange(a, b, id)
        try await created.edit(.insert(at: 0, text: "abc"))
        // Closing takes a checkpoint at the iPad's edit.
        try await created.close()
        let stranger = Device.named("stranger")
        try a.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([.insert(at: 4, text: "X")])))], to: id,
            on: .heads([]), author: stranger)
        try exchange(a, b, id)

        let onIPad = try await a.open(id, as: TextDocument.self)
        let onMac = try await b.open(id, as: TextDocument.self)
        let iPadText = await onIPad.model.text
        let macText = await onMac.model.text
        #expect(iPadText == macText)
        #expect(iPadText == "abchello")
    }

    /// The iPad merges two versions character by character while the Mac, apart, keeps its own version. The two
    /// settlements then differ only in how they settled, and the version made last is kept: the merge, made after
    /// both edits, is newer than the Mac's edit, so nothing typed is discarded (as when a merge stored its text).
    @Test func aCharacterMergeIsAsNewAsItsOwnChange() async throws {
        let iPad = try LibraryFixture(seed: 33)
        let mac = try LibraryFixture(seed: 34)
        let a = try library(iPad, ConflictPolicy())
        let b = try library(mac, ConflictPolicy())
        let onIPad = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "a\n"))
        let id = onIPad.id
        try exchange(a, b, id)
        let onMac = try await b.open(id, as: TextDocument.self)
        // Two edits: the iPad's version is the one every device shows first, and the merge names it first.
        try await onIPad.edit(.append("iPad\n"))
        try await onIPad.edit(.append("more\n"))
        mac.clock.advance(byMilliseconds: 10_000)
        try await onMac.edit(.append("Mac\n"))
        let macHead = try #require(try b.store.heads(of: id).first)
        try exchange(a, b, id)
        iPad.clock.advance(byMilliseconds: 20_000)
        try await onIPad.refresh()
        let merge = try #require(try await onIPad.resolveByMerging())
        #expect(merge.merged.text == "a\niPad\nmore\nMac\n")
        try await onMac.refresh()
        try await onMac.resolve(.version(macHead.hash))
        try exchange(a, b, id)

        for document in [onIPad, onMac] {
            try await document.refresh()
            #expect(await document.state.contains(.inConflict))
            try await document.resolveByMerging()
        }
        try exchange(a, b, id)
        for document in [onIPad, onMac] {
            try await document.refresh()
            #expect(await !document.state.contains(.inConflict))
            #expect(await document.model.text == "a\niPad\nmore\nMac\n")
        }
    }
}

extension PagesCharacterMergeTests {
    /// The text is replaced wholesale on one device (a baseline: the file changed by another program) while another
    /// device adds an image. The baseline did not touch the images, so the merge keeps the added one, as a merge of
    /// the two versions' states does, whatever the changes' lamport order.
    @Test func aBaselineDoesNotDropAnImageAddedApart() async throws {
        let a = try library(iPad)
        let created = try await a.create(
            PagesDocument.self, named: "Trip", contents: try PagesDocument(text: "Day 1: beach\n"))
        let id = created.id
        try await created.close()
        let base = try #require(try a.store.heads(of: id).first)
        // The image first, so that the baseline comes later in the replay's order.
        let putImage = PagesDocument.Operation.putImage(name: "cover.png", bytes: Data([7]))
        try a.store.append(
            [.edit(Edit(operations: PagesDocument.Operation.encodeGroup([putImage])))], to: id,
            on: .heads([base.hash]), author: Device.named("phone"))
        try a.store.append(
            [.baseline(contents: try PagesDocument(text: "Day 2: hills\n").contents().encoded())], to: id,
            on: .heads([base.hash]))

        let document = try await a.open(id, as: PagesDocument.self)
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text == "Day 2: hills\n")
        #expect(await document.model.images["cover.png"] == Data([7]))
    }
}

/// What merging long concurrent branches costs.
@Suite(.workPool) struct CharacterMergeCostTests {
    /// Two devices type apart for a long while; their changes' lamport timestamps interleave (each counts up from
    /// the same base). The replay takes the changes branch by branch (see `branchesAreReplayedOneAfterTheOther`),
    /// and the merge has both branches whole.
    @Test func longBranchesTypedApartMergeWhole() async throws {
        let iPad = try LibraryFixture(seed: 41)
        let mac = try LibraryFixture(seed: 42)
        func library(_ fixture: LibraryFixture) throws -> DocumentLibrary {
            try DocumentLibrary(
                at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
                identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
                backgroundWork: false)
        }
        let a = try library(iPad)
        let b = try library(mac)
        let created = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "base\n"))
        let id = created.id
        try await created.close()
        try exchange(a, b, id)
        let base = try #require(try a.store.heads(of: id).first)
        let count = 3_000
        func typing(_ operation: (Int) -> TextDocument.Operation) -> [ChangeKind] {
            (0..<count).map { .edit(Edit(operations: TextDocument.Operation.encodeGroup([operation($0)]))) }
        }
        try a.store.append(typing { .insert(at: 5 + $0, text: "a") }, to: id, on: .heads([base.hash]))
        try b.store.append(typing { _ in .insert(at: 0, text: "b") }, to: id, on: .heads([base.hash]))
        try exchange(a, b, id)

        let heads = try a.store.heads(of: id)
        #expect(heads.count == 2)
        let merged = try DocumentReplay<TextDocument>(store: a.store, document: id).graphState(from: heads)
        let expected = String(repeating: "b", count: count) + "base\n" + String(repeating: "a", count: count)
        #expect(merged.model.text == expected)

        let document = try await a.open(id, as: TextDocument.self)
        #expect(await document.model.text == expected)
    }

    /// Two branches whose changes interleave in lamport order (each change on its branch's previous one) are replayed
    /// one after the other: the replay's view moves between them once, not at every change, which in lamport order
    /// would undo and redo a whole branch each time (quadratic; a debug build took 45 s for two branches of 3,000).
    @Test func branchesAreReplayedOneAfterTheOther() {
        // Event 0 the base; odd events one branch, even ones the other, in the order a lamport sort gives.
        let count = 2_001
        let parents = (0..<count).map { event in event == 0 ? [] : [max(0, event - 2)] }
        let order = DocumentReplay<TextDocument>.branchOrder(parents: parents)
        #expect(order.count == count)
        #expect(Set(order).count == count)
        var position = [Int](repeating: 0, count: count)
        for (offset, event) in order.enumerated() { position[event] = offset }
        #expect(parents.indices.allSatisfy { event in parents[event].allSatisfy { position[$0] < position[event] } })
        let switches = zip(order.dropFirst(2), order.dropFirst(1)).filter { $0 % 2 != $1 % 2 }.count
        #expect(switches <= 1, "the replay moved between the branches \(switches) times")
    }

    /// A text forked after a trunk: a checkpoint at the fork holding a text unlike the log's (a marker, to see
    /// where a replay starts), the iPad's edit with its own checkpoint (as after closing the document), and the
    /// phone's edit. Returns the library, the document and the two edits.
    func forkedText(seed: UInt64) async throws -> (DocumentLibrary, DocumentID, mine: Change, theirs: Change) {
        let fixture = try LibraryFixture(seed: seed)
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
        let created = try await library.create(
            TextDocument.self, named: "Notes", contents: TextDocument(text: "trunk\n"))
        let id = created.id
        try await created.close()
        let fork = try Self.edit(
            .insert(at: 0, text: "!"), on: try #require(try library.store.heads(of: id).first), in: library, id)
        try library.store.checkpoints.save(
            of: id, at: fork.vector, contents: TextDocument(text: "MARK\n").contents().encoded())
        let mine = try Self.edit(.insert(at: 0, text: "a"), on: fork, in: library, id)
        try library.store.checkpoints.save(
            of: id, at: mine.vector, contents: TextDocument(text: "a!trunk\n").contents().encoded())
        let theirs = try Self.edit(.insert(at: 0, text: "b"), on: fork, in: library, id, by: Device.named("phone"))
        return (library, id, mine, theirs)
    }

    static func edit(
        _ operation: TextDocument.Operation, on parent: Change, in library: DocumentLibrary, _ id: DocumentID,
        by author: Device? = nil
    ) throws -> Change {
        try library.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([operation])))], to: id,
            on: .heads([parent.hash]), author: author
        )[0]
    }

    /// The point a merge's replay starts from is in the past of every version, so the checkpoint it can use is
    /// the latest there, not the latest overall: that one is usually the device's own, on its own branch, and
    /// would send the replay back through the whole history to the document's first baseline.
    @Test func aMergeStartsFromTheCheckpointWhereTheBranchesForked() async throws {
        let (library, id, _, _) = try await forkedText(seed: 43)
        let document = try await library.open(id, as: TextDocument.self)
        #expect(await !document.state.contains(.inConflict))
        #expect(await document.model.text.hasSuffix("MARK\n"), "the merge replayed from the first baseline")
    }

    /// An edit made on a merge, with no checkpoint after the merge: the latest checkpoint in its past is the
    /// iPad's, on one branch; the walk passes it and starts from the one at the fork.
    @Test func anEditOnAMergeStartsFromTheCheckpointWhereTheBranchesForked() async throws {
        let (library, id, mine, theirs) = try await forkedText(seed: 44)
        let merge = try library.store.append(
            [.resolution(Resolution(strategy: .merge, chosen: [mine.hash, theirs.hash], discarded: []))], to: id,
            on: .heads([mine.hash, theirs.hash]))[0]
        _ = try Self.edit(.insert(at: 0, text: "e"), on: merge, in: library, id)
        let document = try await library.open(id, as: TextDocument.self)
        #expect(await document.model.text.hasPrefix("e"))
        #expect(await document.model.text.hasSuffix("MARK\n"), "the edit replayed from the first baseline")
    }
}

/// Settlements met inside a later merge: what they settled stays settled.
@Suite struct CharacterMergeAfterSettlementTests {
    let fixture: LibraryFixture
    let library: DocumentLibrary
    let phone = Device.named("phone")

    init() throws {
        fixture = try LibraryFixture(seed: 51)
        library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
    }

    func edit(_ operation: TextDocument.Operation, on parent: Change, _ id: DocumentID, by author: Device? = nil)
        throws -> Change
    {
        try library.store.append(
            [.edit(Edit(operations: TextDocument.Operation.encodeGroup([operation])))], to: id,
            on: .heads([parent.hash]), author: author
        )[0]
    }

    /// "ab" becomes "1ab" on the iPad and "ab2" on the phone; the iPad settles them with `resolution`; the phone,
    /// not having seen it, goes on from its own version with "3ab2". Returns the document's text once merged.
    func settledThenEditedApart(_ resolution: (_ iPad: Change, _ phone: Change) -> Resolution) async throws
        -> String
    {
        let created = try await library.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "ab"))
        let id = created.id
        try await created.close()
        let base = try #require(try library.store.heads(of: id).first)
        // The phone's first: the iPad's edit then has the higher lamport, and is the version the settlement shows.
        let onPhone = try edit(.insert(at: 2, text: "2"), on: base, id, by: phone)
        let onIPad = try edit(.insert(at: 0, text: "1"), on: base, id)
        try library.store.append(
            [.resolution(resolution(onIPad, onPhone))], to: id, on: .heads([onIPad.hash, onPhone.hash]))
        _ = try edit(.insert(at: 0, text: "3"), on: onPhone, id, by: phone)
        let document = try await library.open(id, as: TextDocument.self)
        #expect(await !document.state.contains(.inConflict))
        return await document.model.text
    }

    /// A merge that stored its text (as every merge did before, or a person's merge) replaces the text of all the
    /// versions it merged: the phone's "2", which it holds, is not typed a second time by it.
    @Test func aMergeWithContentsDoesNotRepeatTheVersionsItMerged() async throws {
        let text = try await settledThenEditedApart { iPad, phone in
            Resolution(
                strategy: .merge, chosen: [iPad.hash, phone.hash], discarded: [],
                contents: TextDocument(text: "1ab2").contents().encoded())
        }
        #expect(["13ab2", "31ab2"].contains(text), "\(text.debugDescription)")
    }
}

extension CharacterMergeAfterSettlementTests {
    /// A person kept the iPad's version and discarded the phone's, which the phone went on editing: the choice
    /// deletes the discarded version's "2", and only the later "3" comes in.
    @Test func aDiscardedVersionStaysDiscardedWhenEditsMadeOnItMergeIn() async throws {
        let text = try await settledThenEditedApart { iPad, phone in
            Resolution(strategy: .userChoice, chosen: [iPad.hash], discarded: [phone.hash])
        }
        #expect(["13ab", "31ab"].contains(text), "\(text.debugDescription)")
    }
}
