import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

/// A replay from the change graph notes the states at points it passed that every later change descends from; an
/// open document replays what arrives next from them. Each such state is the state a replay of its own gives, and a
/// replay that starts from a known state no point of the walk lands on reads the log below it at once: both end as
/// a fresh replay from the checkpoint does.
@Suite(.workPool) struct PassedStateTests {
    /// Two devices that type apart, `rounds` times `count` edits each, and after each round merge on one of them
    /// (an edit made on both heads), exchanging everything: one text document's history with a point every later
    /// change descends from at each merge.
    struct CoTyped {
        let first: DocumentLibrary
        let second: DocumentLibrary
        let id: DocumentID

        init(seed: UInt64) async throws {
            func library(_ fixture: LibraryFixture) throws -> DocumentLibrary {
                try DocumentLibrary(
                    at: fixture.root, key: fixture.key, deviceName: fixture.device.name, clock: fixture.clock,
                    identifiers: fixture.identifiers, autosave: .manual,
                    conflictPolicy: ConflictPolicy(default: .merge), backgroundWork: false)
            }
            first = try library(try LibraryFixture(seed: seed))
            second = try library(try LibraryFixture(seed: seed + 1))
            let created = try await first.create(
                TextDocument.self, named: "Notes", contents: TextDocument(text: "base\n"))
            id = created.id
            try await created.close()  // a checkpoint of the base text
            try exchange(first, second, id)
        }

        /// One round: each device types `count` characters on its own head, then the first merges both.
        func round(_ count: Int, letters: (Character, Character)) throws {
            func typing(_ letter: Character, at place: @escaping (Int) -> Int) -> [ChangeKind] {
                (0..<count).map {
                    .edit(
                        Edit(
                            operations: TextDocument.Operation.encodeGroup([.insert(at: place($0), text: "\(letter)")]))
                    )
                }
            }
            try first.store.append(typing(letters.0) { _ in 0 }, to: id, on: .allHeads)
            try second.store.append(typing(letters.1) { $0 + 1 }, to: id, on: .allHeads)
            try exchange(first, second, id)
            let merge = Edit(
                operations: TextDocument.Operation.encodeGroup([.insert(at: 0, text: "|")]), isMadeOnMerge: true)
            try first.store.append(.edit(merge), to: id, on: .allHeads)
            try exchange(first, second, id)
        }

        var head: Change {
            get throws {
                let heads = try first.store.heads(of: id)
                try #require(heads.count == 1)
                return heads[0]
            }
        }

        func freshState(at change: Change) throws -> String {
            try DocumentReplay<TextDocument>(store: first.store, document: id).state(at: change).model.text
        }
    }

    @Test func passedStatesAreTheStatesAtTheirChanges() async throws {
        let history = try await CoTyped(seed: 61)
        for round in 0..<4 { try history.round(40, letters: round.isMultiple(of: 2) ? ("a", "b") : ("c", "d")) }
        let head = try history.head
        var replay = DocumentReplay<TextDocument>(store: history.first.store, document: history.id)
        replay.notesPassedStates = true
        let outcome = try replay.graphState(from: [head])
        #expect(outcome.model.text == (try history.freshState(at: head)))
        #expect(outcome.passedStates.count == 2)
        // The nearest point, and one at least the spacing below the head.
        let counts = outcome.passedStates.map(\.change.vector.changeCount)
        #expect(counts.allSatisfy { $0 < head.vector.changeCount })
        #expect(counts.last! + DocumentReplay<TextDocument>.passedSpacing <= head.vector.changeCount)
        for state in outcome.passedStates {
            #expect(state.model.text == (try history.freshState(at: state.change)), "the state at \(state.change.id)")
        }
        // Without being asked, a replay notes none.
        #expect(
            try DocumentReplay<TextDocument>(store: history.first.store, document: history.id)
                .graphState(from: [head]).passedStates.isEmpty)
    }

    @Test func aReplayStartsFromAPassedState() async throws {
        let history = try await CoTyped(seed: 63)
        for _ in 0..<3 { try history.round(40, letters: ("a", "b")) }
        var replay = DocumentReplay<TextDocument>(store: history.first.store, document: history.id)
        replay.notesPassedStates = true
        let passed = try replay.graphState(from: [try history.head]).passedStates
        let nearest = try #require(passed.first)

        try history.round(30, letters: ("x", "y"))
        let head = try history.head
        var next = DocumentReplay<TextDocument>(store: history.first.store, document: history.id)
        next.known = Dictionary(uniqueKeysWithValues: passed.map { ($0.change.hash, ($0.change.vector, $0.model)) })
        let replayed = try next.replayGraph(TextDocument.self, from: [head], read: nil)
        // The walk stops at the nearest point passed before: only what came after it is replayed.
        #expect(replayed.baseChange == nearest.change.id)
        #expect(replayed.graph.eventCount == Int(head.vector.changeCount - nearest.change.vector.changeCount))
        #expect(replayed.graph.text == (try history.freshState(at: head)))
    }

    /// A known state that is one device's head while the other typed apart: no point of the walk lands on it, so
    /// the walk goes on below the log it read after that state, down to the checkpoint, reading the rest at once.
    @Test func aWalkPastAKnownStateEndsAsAFreshReplay() async throws {
        let history = try await CoTyped(seed: 65)
        try history.round(40, letters: ("a", "b"))
        // The first device types alone, then both type apart, far more than the walk reads one by one.
        let lone = try history.first.store.append(
            (0..<5).map { _ in
                .edit(Edit(operations: TextDocument.Operation.encodeGroup([.insert(at: 0, text: "l")])))
            }, to: history.id, on: .allHeads
        ).last!
        let loneState = try history.freshState(at: lone)
        try history.round(DocumentReplay<TextDocument>.singleReadsBelowTail * 3, letters: ("c", "d"))
        let head = try history.head
        var replay = DocumentReplay<TextDocument>(store: history.first.store, document: history.id)
        replay.known = [lone.hash: (lone.vector, TextDocument(text: loneState))]
        let replayed = try replay.replayGraph(TextDocument.self, from: [head], read: nil)
        #expect(replayed.baseChange != lone.id)
        #expect(replayed.graph.text == (try history.freshState(at: head)))
    }
}
