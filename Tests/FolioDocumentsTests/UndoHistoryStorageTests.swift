import FolioCore
import FolioModels
import FolioStore
import Foundation
import Testing

@testable import FolioDocuments

/// The saved undo history names the changes its steps reverse and copies none of their operations: a step read
/// back after reopening computes its operations from the log.
@Suite struct UndoHistoryStorageTests {
    let fixture: LibraryFixture

    init() throws {
        fixture = try LibraryFixture()
    }

    func savedHistory(of document: DocumentID, in library: DocumentLibrary) throws -> Data {
        try #require(try library.localState.value(UndoHistory<TextDocument.Operation>.stateKey, of: document))
    }

    @Test func aDeletionIsSavedByReferenceAndUndoneAfterReopening() async throws {
        let text = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 500)
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.insert(at: 0, text: text))
        try await document.edit(.delete(at: 0, count: text.unicodeScalars.count))
        try await document.edit(.insert(at: 0, text: "new"))
        let saved = try savedHistory(of: document.id, in: library)
        #expect(saved.count < 100, "three steps by reference, not \(saved.count) bytes of copied text")
        try await document.close()

        let reopened = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        try await reopened.undo()
        #expect(await reopened.model.text == "")
        try await reopened.undo()
        #expect(await reopened.model.text == text, "the deleted text comes back from the log")
        try await reopened.undo()
        #expect(await reopened.model.text == "")
        #expect(await reopened.canUndo == false)
        try await reopened.close()

        let third = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        try await third.redo()
        try await third.redo()
        #expect(await third.model.text == "")
        try await third.redo()
        #expect(await third.model.text == "new")
        #expect(await third.canRedo == false)
        try await third.undo()
        try await third.undo()
        #expect(await third.model.text == text)
        try await third.close()
    }

    @Test func stepsOfAnotherModelAreComputedFromTheLogToo() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(RecordsDocument.self, named: "People")
        try await document.edit(.add(record: "r1", fields: ["name": "Ann"]))
        try await document.edit(.set(record: "r1", field: "name", value: "Bea"))
        try await document.edit(.remove(record: "r1"))
        try await document.close()

        let reopened = try await fixture.library(autosave: .manual).open(document.id, as: RecordsDocument.self)
        try await reopened.undo()
        #expect(await reopened.model["r1"]?.fields["name"] == "Bea", "the removed record comes back")
        try await reopened.undo()
        #expect(await reopened.model["r1"]?.fields["name"] == "Ann")
        try await reopened.redo()
        #expect(await reopened.model["r1"]?.fields["name"] == "Bea")
        try await reopened.close()
    }

    /// Closing folds the document's changes into a segment: steps that name them still compute their operations.
    @Test func stepsNamingFoldedChangesUndoAfterReopening() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        var texts = [""]
        for index in 0..<40 {
            try await document.edit(index % 5 == 4 ? .delete(at: 0, count: 2) : .append("w\(index) "))
            texts.append(await document.model.text)
        }
        try await document.close()
        #expect(try library.store.changeCount() > 40)

        let reopened = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        for expected in texts.dropLast().suffix(12).reversed() {
            try await reopened.undo()
            #expect(await reopened.model.text == expected)
        }
        try await reopened.close()
    }

    /// A change not made on the version shown alone (here on this device's change that another process appended
    /// while the group was open) is named by a step that is not a chain: the state the log replays at its primary
    /// parent may not be the one its operations were applied to, so its undo takes back what the change did in the
    /// text (a text document undoes by reversal), and so it does after reopening.
    @Test func aChangeNotMadeOnTheVersionShownAloneIsUndoneByReversal() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("one"))
        let grouping = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 60_000)
        try await document.close()
        let second = try fixture.library(autosave: grouping)
        let open = try await second.open(document.id, as: TextDocument.self)
        try await open.edit(.append(" two"))
        try second.store.append(
            .edit(Edit(operations: TextDocument.Operation.encodeGroup([.append("!")]))), to: document.id)
        let shown = await open.currentHead.hash
        try await open.commit()
        let made = try #require(try second.log(of: document.id).last)
        #expect(made.parents != [shown], "made on the change appended meanwhile too")
        let saved = UndoHistory<TextDocument.Operation>(decoding: try savedHistory(of: document.id, in: second))
        #expect(saved.undoSteps.last?.sources == [made.id])
        #expect(saved.undoSteps.last?.isChain == false)
        #expect(saved.undoSteps.first?.source != nil, "the first edit, made on the version shown, by reference")
        #expect(await open.model.text == "one! two")
        try await open.close()
        let reopened = try await fixture.library(autosave: .manual).open(document.id, as: TextDocument.self)
        try await reopened.undo()
        #expect(await reopened.model.text == "one!", "the step takes back \" two\" only")
        try await reopened.redo()
        #expect(await reopened.model.text == "one! two")
        try await reopened.close()
    }

    /// A history saved by a version that copied each step's operations (format 1) still reads and undoes.
    @Test func aHistoryOfFormatOneStillUndoes() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("hello"))
        let edit = try #require(try library.edits(of: document.id).last)
        try await document.close()
        var writer = BinaryWriter()
        writer.write(byte: 1)
        writer.write(varint: 1)
        writer.write(fixed: edit.id.device.uuid.high)
        writer.write(fixed: edit.id.device.uuid.low)
        writer.write(varint: edit.id.seq)
        writer.write(lengthPrefixed: TextDocument.Operation.encodeGroup([.delete(at: 0, count: 5)]))
        writer.write(varint: 0)
        let second = try fixture.library(autosave: .manual)
        try second.localState.set(
            [UndoHistory<TextDocument.Operation>.stateKey: Data(writer.bytes)], of: document.id)

        let reopened = try await second.open(document.id, as: TextDocument.self)
        try await reopened.undo()
        #expect(await reopened.model.text == "")
        try await reopened.redo()
        #expect(await reopened.model.text == "hello")
        try await reopened.close()
    }

    /// A step naming a change the log does not hold is refused as an operation that no longer applies: nothing is
    /// appended, and the document is unchanged.
    @Test func aStepWhoseChangeIsNotInTheLogChangesNothing() async throws {
        let library = try fixture.library(autosave: .manual)
        let document = try await library.create(TextDocument.self, named: "Notes")
        try await document.edit(.append("hello"))
        let edit = try #require(try library.edits(of: document.id).last)
        let missing = ChangeID(device: edit.id.device, seq: edit.id.seq + 40)
        var history = UndoHistory<TextDocument.Operation>()
        history.recordEdit(.init(target: missing, source: missing, operations: [.delete(at: 0, count: 5)]))
        try await document.close()
        let second = try fixture.library(autosave: .manual)
        try second.localState.set([UndoHistory<TextDocument.Operation>.stateKey: history.encoded()], of: document.id)

        let reopened = try await second.open(document.id, as: TextDocument.self)
        let changes = try second.log(of: document.id).count
        #expect(await reopened.canUndo)
        let error = try await #require(throws: DocumentError.self) { try await reopened.undo() }
        #expect(error.code == .invalidOperation)
        #expect(await reopened.model.text == "hello")
        #expect(try second.log(of: document.id).count == changes, "nothing was appended")
        try await reopened.close()
    }

    /// A step of several changes (form 2) keeps them in order; one that declares fewer than two reads as damage.
    @Test func aStepOfSeveralChangesRoundTrips() throws {
        let device = DeviceID(UUIDBytes(high: 1, low: 2))
        let other = DeviceID(UUIDBytes(high: 3, low: 4))
        let sources = [
            ChangeID(device: device, seq: 4), ChangeID(device: device, seq: 5), ChangeID(device: other, seq: 1),
        ]
        var history = UndoHistory<TextDocument.Operation>()
        history.recordEdit(.init(target: sources[2], sources: sources, operations: [.delete(at: 0, count: 3)]))
        let decoded = UndoHistory<TextDocument.Operation>(decoding: history.encoded())
        #expect(decoded.undoSteps.map(\.sources) == [sources])
        #expect(decoded.undoSteps.map(\.operations) == [nil], "by reference")

        var oneSource = BinaryWriter()
        oneSource.write(byte: 2)
        oneSource.write(varint: 1)
        oneSource.write(fixed: 1)
        oneSource.write(fixed: 2)
        oneSource.write(varint: 1)
        for value: UInt64 in [2, 0, 1, 1, 0, 1] { oneSource.write(varint: value) }  // form 2 naming one source
        oneSource.write(varint: 0)
        #expect(UndoHistory<TextDocument.Operation>(decoding: Data(oneSource.bytes)) == UndoHistory())
    }

    @Test func formatTwoRoundTripsItsReferencesAndRefusesDamage() throws {
        let device = DeviceID(UUIDBytes(high: 1, low: 2))
        let other = DeviceID(UUIDBytes(high: 3, low: 4))
        var history = UndoHistory<TextDocument.Operation>()
        history.recordEdit(.init(target: ChangeID(device: device, seq: 3), source: nil, operations: [.append("x")]))
        history.recordEdit(
            .init(
                target: ChangeID(device: device, seq: 5), source: ChangeID(device: device, seq: 5),
                operations: [.delete(at: 0, count: 1)]))
        history.recordUndo(
            .init(
                target: ChangeID(device: device, seq: 5), source: ChangeID(device: other, seq: 9),
                operations: [.insert(at: 0, text: "y")]))
        let decoded = UndoHistory<TextDocument.Operation>(decoding: history.encoded())
        #expect(decoded.undoSteps.map(\.target) == history.undoSteps.map(\.target))
        #expect(decoded.undoSteps.map(\.operations) == [[.append("x")]], "a step without a source keeps its copy")
        #expect(decoded.redoSteps.map(\.source) == [ChangeID(device: other, seq: 9)])
        #expect(decoded.redoSteps.map(\.operations) == [nil], "a step with a source is saved by reference")

        var outOfRange = BinaryWriter()
        outOfRange.write(byte: 2)
        outOfRange.write(varint: 1)
        outOfRange.write(fixed: 1)
        outOfRange.write(fixed: 2)
        outOfRange.write(varint: 1)
        for value: UInt64 in [0, 0, 1, 1, 1] { outOfRange.write(varint: value) }  // source device 1 of 1
        outOfRange.write(varint: 0)
        #expect(UndoHistory<TextDocument.Operation>(decoding: Data(outOfRange.bytes)) == UndoHistory())

        let bytes = history.encoded()
        for length in 0..<bytes.count {
            #expect(UndoHistory<TextDocument.Operation>(decoding: bytes.prefix(length)) == UndoHistory())
        }
    }
}
