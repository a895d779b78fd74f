import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation
import Testing

/// Who wrote each character of a text (`Document.blame()`): the change that typed it, across devices, merges,
/// deletions and contents that replaced the text; stretches that cover the text exactly.
@Suite struct DocumentBlameTests {
    let mac: LibraryFixture
    let iPad: LibraryFixture

    init() throws {
        mac = try LibraryFixture(seed: 61)
        iPad = try LibraryFixture(seed: 62)
    }

    /// A library that merges concurrent typing, as co-editing apps set it.
    func merging(_ fixture: LibraryFixture) throws -> DocumentLibrary {
        try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: .manual, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
    }

    /// The stretches by device, adjacent stretches of one device joined.
    static func byDevice(_ blame: [TextAuthorship]) -> [(range: Range<Int>, device: DeviceID?)] {
        var result: [(range: Range<Int>, device: DeviceID?)] = []
        for stretch in blame {
            if let last = result.last, last.device == stretch.change?.device,
                last.range.upperBound == stretch.range.lowerBound
            {
                result[result.count - 1].range = last.range.lowerBound..<stretch.range.upperBound
            } else {
                result.append((stretch.range, stretch.change?.device))
            }
        }
        return result
    }

    @Test func eachDevicesTypingIsItsOwnAcrossAMergeAndADeletion() async throws {
        let a = try merging(mac)
        let b = try merging(iPad)
        let note = try await a.create(TextDocument.self, named: "Notes", in: .shared)
        try await note.edit(.append("Hello"))
        try await note.commit()
        try exchange(a, b, note.id)
        let copy = try await b.open(note.id, as: TextDocument.self)
        try await copy.edit(.append(" world"))
        try await copy.commit()
        // Concurrently: the Mac types at the start, the iPad deletes the Mac's "H" and types after "Hello".
        try await note.edit(.insert(at: 0, text: ">> "))
        try await note.commit()
        try await copy.edit(.delete(at: 0, count: 1))
        try await copy.edit(.insert(at: 4, text: "!"))
        try await copy.commit()
        try exchange(a, b, note.id)
        try await note.refresh()
        try await copy.refresh()
        let text = await note.model.text
        #expect(text == ">> ello! world")
        for document in [note, copy] {
            let blame = try await document.blame()
            #expect(blame.first?.range.lowerBound == 0)
            #expect(blame.last?.range.upperBound == text.unicodeScalars.count, "the stretches cover the text")
            #expect(zip(blame, blame.dropFirst()).allSatisfy { $0.range.upperBound == $1.range.lowerBound })
            let devices = Self.byDevice(blame)
            #expect(devices.map(\.range) == [0..<7, 7..<14], "\(blame)")
            #expect(devices.map(\.device) == [a.device.id, b.device.id])
        }
        let blame = try await note.blame()
        // ">> " and "ello" are the Mac's, in two changes; "!" and " world" the iPad's.
        #expect(blame.map { $0.change?.device } == [a.device.id, a.device.id, b.device.id, b.device.id])
    }

    @Test func contentsThatReplacedTheTextAreTheirChangesTyping() async throws {
        let a = try mac.library()
        let note = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one two"))
        let baseline = try #require(try a.store.changes(of: note.id).last)
        try await note.edit(.insert(at: 3, text: ","))
        let blame = try await note.blame()
        let edit = try #require(try a.store.changes(of: note.id).last)
        #expect(
            blame == [
                TextAuthorship(range: 0..<3, change: baseline.id), TextAuthorship(range: 3..<4, change: edit.id),
                TextAuthorship(range: 4..<8, change: baseline.id),
            ])
    }

    /// A change whose contents replace the text is credited with the stretch it changed only (between the text's
    /// common beginning and end): a revert to the saved file takes back an edit and leaves the rest with whoever
    /// typed it.
    @Test func contentsThatReplaceTheTextAreCreditedOnlyWithWhatTheyChanged() async throws {
        let a = try mac.library()
        let note = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "one two"))
        let baseline = try #require(try a.store.changes(of: note.id).last)
        try await note.save()
        try await note.edit(.insert(at: 3, text: ","))
        try await note.commit()
        try await note.revert()
        #expect(await note.model.text == "one two")
        let revert = try #require(try a.store.changes(of: note.id).last)
        guard case .baseline = revert.kind else {
            Issue.record("a revert is a baseline, not \(revert.kind)")
            return
        }
        let blame = try await note.blame()
        #expect(
            blame == [TextAuthorship(range: 0..<7, change: baseline.id)],
            "\(blame) revert \(revert.id) baseline \(baseline.id)")
    }

    @Test func aModelThatDoesNotMergeCharactersHasNoBlame() async throws {
        let a = try mac.library()
        let list = try await a.create(RecordsDocument.self, named: "Tasks")
        let error = try await #require(throws: DocumentError.self) { try await list.blame() }
        #expect(error.code == .invalidOperation)
    }
}
