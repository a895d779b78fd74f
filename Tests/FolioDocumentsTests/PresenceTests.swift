import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTesting
import Foundation
import Synchronization
import Testing

@testable import FolioDocuments

/// Selections shown to other devices (`Document.setSelection(_:)`) and placed in their text (`Document.others`):
/// a selection stays after the characters it followed, whatever was typed since on either side.
@Suite struct PresenceTests {
    let iPad: LibraryFixture
    let mac: LibraryFixture

    init() throws {
        iPad = try LibraryFixture(seed: 51)
        mac = try LibraryFixture(seed: 52)
    }

    /// What a library's open documents publish, in order.
    final class Published: Sendable {
        let states = Mutex<[(DocumentID, [UInt8])]>([])
        var last: [UInt8]? { states.withLock { $0.last?.1 } }
        var count: Int { states.withLock { $0.count } }
    }

    func library(_ fixture: LibraryFixture, autosave: AutosavePolicy = .manual) throws -> (DocumentLibrary, Published) {
        let library = try DocumentLibrary(
            at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
            identifiers: fixture.identifiers, autosave: autosave, conflictPolicy: ConflictPolicy(default: .merge),
            backgroundWork: false)
        let published = Published()
        library.attachPresence { document, state in published.states.withLock { $0.append((document, state)) } }
        return (library, published)
    }

    /// One text open on two devices, both at the same version.
    func shared(_ text: String, grouping: Bool = false) async throws -> (
        a: DocumentLibrary, aOut: Published, b: DocumentLibrary, first: Document<TextDocument>,
        second: Document<TextDocument>
    ) {
        let grouped = AutosavePolicy(
            idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 60_000)
        let (a, aOut) = try library(iPad, autosave: grouping ? grouped : .manual)
        let (b, _) = try library(mac)
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: text))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)
        return (a, aOut, b, first, second)
    }

    @Test func aCursorIsShownWhereItWasPlacedAndMovesWithEditsMadeHere() async throws {
        let (a, aOut, _, first, second) = try await shared("abc def")
        try await first.setSelection(TextSelection(cursor: 3))
        let state = try #require(aOut.last)
        await second.receivePresence(state, from: a.device.id)
        let shown = await second.others
        #expect(shown == [Presence(device: a.device.id, name: a.device.name, selection: TextSelection(cursor: 3))])
        // Typing before it moves it; typing right at it leaves it after the character it follows.
        try await second.edit(.insert(at: 0, text: "XY"))
        try await second.edit(.insert(at: 5, text: "!"))
        #expect(await second.others.first?.selection == TextSelection(cursor: 5))
        #expect(await second.model.text == "XYabc! def")
    }

    /// A state not heard again for 30 s goes (its device's leaving never came: a server process killed), in an open
    /// document and in one opened later; one its device sends again stays.
    @Test func aSelectionNotHeardAgainForThirtySecondsGoes() async throws {
        let (a, aOut, b, first, second) = try await shared("abc def")
        try await first.setSelection(TextSelection(cursor: 3))
        let state = try #require(aOut.last)
        await b.receivePresence(state, from: a.device.id, in: first.id)
        #expect(await second.others.count == 1)
        // Renewed after 20 s: it lasts 30 s from then.
        mac.clock.advance(byMilliseconds: 20_000)
        await b.receivePresence(state, from: a.device.id, in: first.id)
        mac.clock.advance(byMilliseconds: 20_000)
        try await second.runDueWork()
        #expect(await second.others.count == 1, "renewed 20 s ago")
        #expect(
            await second.nextDueTime(now: mac.clock.now().millisecondsSince1970)
                == mac.clock.now().millisecondsSince1970 + 10_000)
        mac.clock.advance(byMilliseconds: 10_000)
        try await second.runDueWork()
        #expect(await second.others.isEmpty, "not heard for 30 s")
        // Nor does a document opened now show it.
        try await second.close()
        let reopened = try await b.open(first.id, as: TextDocument.self)
        #expect(await reopened.others.isEmpty)
    }

    @Test func aCursorPlacedInAVersionNotYetHereWaitsForIt() async throws {
        let (a, aOut, b, first, second) = try await shared("abc def")
        try await first.edit(.insert(at: 3, text: "!!"))
        try await first.commit()
        try await first.setSelection(TextSelection(cursor: 5))
        await second.receivePresence(try #require(aOut.last), from: a.device.id)
        #expect(await second.others.first?.selection == nil, "the version it was placed in has not arrived")
        // Meanwhile this device typed at the start, apart.
        try await second.edit(.insert(at: 0, text: "XY"))
        try await second.commit()
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await second.model.text == "XYabc!! def")
        #expect(await second.others.first?.selection == TextSelection(cursor: 7))
    }

    @Test func aSelectionMadeWhileEditsWaitLeavesWithTheirCommit() async throws {
        let (a, aOut, _, first, second) = try await shared("hello world", grouping: true)
        try await first.edit(.insert(at: 5, text: ","))
        try await first.setSelection(TextSelection(anchor: 12, head: 7))
        #expect(aOut.count == 0, "nothing leaves before the edit is committed")
        try await first.edit(.insert(at: 0, text: ">"))
        try await first.commit()
        let state = try PresenceState(decoding: try #require(aOut.last))
        #expect((state.anchor, state.head) == (13, 8), "moved by the edit made after it")
        #expect(state.heads == [await first.currentHead.hash])
        _ = a
        _ = second
    }

    @Test func aSelectionFollowsItsCharactersThroughConcurrentEdits() async throws {
        let (a, aOut, b, first, second) = try await shared("hello world")
        // "world" selected on the first device, backwards.
        try await first.setSelection(TextSelection(anchor: 11, head: 6))
        let state = try #require(aOut.last)
        // The second device replaced "hello" and typed inside the selection, then the first device typed too.
        try await second.edit(.delete(at: 0, count: 5))
        try await second.edit(.insert(at: 0, text: "big"))
        try await second.edit(.insert(at: 5, text: "-"))
        try await second.commit()
        try await first.edit(.insert(at: 11, text: "!"))
        try await first.commit()
        try exchange(a, b, first.id)
        try await second.refresh()
        #expect(await second.model.text == "big w-orld!")
        await second.receivePresence(state, from: a.device.id)
        #expect(await second.others.first?.selection == TextSelection(anchor: 10, head: 4))
    }

    @Test func leavingClosingAndForgettingRemoveAPresence() async throws {
        let (a, aOut, _, first, second) = try await shared("abc")
        try await first.setSelection(TextSelection(cursor: 1))
        await second.receivePresence(try #require(aOut.last), from: a.device.id)
        #expect(await second.others.count == 1)
        await second.receivePresence([], from: a.device.id)
        #expect(await second.others.isEmpty)
        await second.receivePresence(try #require(aOut.last), from: a.device.id)
        await second.forgetPresence()
        #expect(await second.others.isEmpty)
        // Bytes that do not decode are passed over.
        await second.receivePresence([9, 9, 9], from: a.device.id)
        #expect(await second.others.isEmpty)
        // Clearing the selection, and closing, tell the others.
        try await first.setSelection(nil)
        #expect(aOut.last == [])
        try await first.setSelection(TextSelection(cursor: 2))
        try await first.close()
        #expect(aOut.last == [])
    }

    @Test func aDocumentOpenedLaterShowsWhoIsAlreadyThere() async throws {
        let (a, aOut, b, first, second) = try await shared("abc")
        try await first.setSelection(TextSelection(cursor: 2))
        let state = try #require(aOut.last)
        try await second.close()
        // Heard while the document was closed on this device.
        await b.receivePresence(state, from: a.device.id, in: first.id)
        let reopened = try await b.open(first.id, as: TextDocument.self)
        #expect(await reopened.others.map(\.selection) == [TextSelection(cursor: 2)])
        // Gone once the device left, or the connection that brought it ended.
        try await reopened.close()
        await b.receivePresence([], from: a.device.id, in: first.id)
        #expect(try await b.open(first.id, as: TextDocument.self).others.isEmpty)
        await b.receivePresence(state, from: a.device.id, in: first.id)
        await b.forgetPresence()
        let third = try await b.open(first.id, as: TextDocument.self)
        #expect(await third.others.isEmpty)
    }

    @Test func aReplacementOfTheWholeTextMovesWhatFollowsThePartThatDiffers() async throws {
        let (a, aOut, _, first, second) = try await shared("hello world")
        try await first.setSelection(TextSelection(cursor: 8))
        await second.receivePresence(try #require(aOut.last), from: a.device.id)
        // An app that binds the whole text sends the whole text at every keystroke.
        try await second.edit(.replace("hello, world"))
        #expect(await second.others.first?.selection == TextSelection(cursor: 9))
        try await second.edit(.replace("world"))
        #expect(await second.others.first?.selection == TextSelection(cursor: 2))
    }

    @Test func aSelectionPastItsTextTakesNoRoomInTheOthersPlaces() async throws {
        let (a, aOut, b, first, second) = try await shared("abcdef")
        try await first.edit(.insert(at: 0, text: "X"))
        try await first.commit()
        try await first.setSelection(TextSelection(cursor: 4))
        let good = try #require(aOut.last)
        try exchange(a, b, first.id)
        try await second.refresh()
        // Another device claims a selection past the end of the text, in the same version.
        let hostile = PresenceState(
            name: "hostile", heads: [await first.currentHead.hash], anchor: 1, head: PresenceState.maximumPosition)
        let stranger = DeviceID(UUIDBytes(high: 1, low: 2))
        await second.receivePresence(hostile.encoded(), from: stranger)
        await second.receivePresence(good, from: a.device.id)
        // Placed together, by a replay (a local edit since makes the versions differ).
        try await second.edit(.insert(at: 7, text: "!"))
        try await second.undo()
        let shown = await second.others
        #expect(shown.first { $0.device == a.device.id }?.selection == TextSelection(cursor: 4))
        #expect(shown.first { $0.device == stranger }?.selection == nil)
    }

    @Test func aSelectionOutsideTheTextIsRefused() async throws {
        let (_, aOut, _, first, _) = try await shared("abc")
        await #expect(throws: DocumentError.self) { try await first.setSelection(TextSelection(anchor: 0, head: 4)) }
        #expect(aOut.count == 0)
    }

    @Test func thePresenceStreamAnnouncesArrivalsAndMoves() async throws {
        let (a, aOut, _, first, second) = try await shared("abc")
        var updates = second.presence.makeAsyncIterator()
        try await first.setSelection(TextSelection(cursor: 2))
        await second.receivePresence(try #require(aOut.last), from: a.device.id)
        #expect(await updates.next()?.first?.selection == TextSelection(cursor: 2))
        try await second.edit(.insert(at: 0, text: "Z"))
        #expect(await updates.next()?.first?.selection == TextSelection(cursor: 3))
    }

    @Test func aStateRoundTripsAndHostileBytesAreRefused() throws {
        let hash = ChangeHash(bytes: [UInt8](repeating: 7, count: 32))
        let state = PresenceState(name: "Anna's iPad", heads: [hash], anchor: 3, head: 9)
        #expect(try PresenceState(decoding: state.encoded()) == state)
        let bytes = state.encoded()
        #expect(throws: CodecError.self) { try PresenceState(decoding: Array(bytes.dropLast())) }
        #expect(throws: CodecError.self) { try PresenceState(decoding: bytes + [0]) }
        #expect(throws: CodecError.self) { try PresenceState(decoding: [2] + bytes.dropFirst()) }
        // A head count past the bound, a position past the bound.
        #expect(throws: CodecError.self) { try PresenceState(decoding: [1, 0, 17]) }
        #expect(throws: CodecError.self) {
            try PresenceState(decoding: [1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0])
        }
        let long = PresenceState(name: String(repeating: "é", count: 100), heads: [], anchor: 0, head: 0)
        #expect(long.name.utf8.count <= PresenceState.maximumNameBytes)
    }
}
