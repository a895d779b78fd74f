import FolioConflicts
import FolioCore
import FolioModels
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

/// Undo while another device types and deletes, over random histories: one device types its undo steps each in a
/// letter of its own (`a` for the first, `b` for the next, …), the other types and deletes capitals, the
/// changes crossing at random, during the steps too. Undoing the newest step removes every character of its letter
/// and changes nothing else; a redo made at once gives back the text exactly; both devices end with the same text.
@Suite(.serialized, .workPool) struct CoEditedUndoPropertyTests {
    @Test(arguments: 0..<6) func undoTakesBackOneStepWhateverTheOtherDeviceDid(round: Int) async throws {
        let seed = TestSeed.make() &+ UInt64(round)
        var random = SplitMix64(seed: seed)
        let laptop = try LibraryFixture(seed: 81 + UInt64(round) * 2)
        let phone = try LibraryFixture(seed: 82 + UInt64(round) * 2)
        let a = try laptop.coEditingLibrary()
        let b = try phone.coEditingLibrary()
        let first = try await a.create(TextDocument.self, named: "Notes", contents: TextDocument(text: "|\n"))
        try exchange(a, b, first.id)
        let second = try await b.open(first.id, as: TextDocument.self)

        func sync() async throws {
            try exchange(a, b, first.id)
            try await first.refresh()
            try await second.refresh()
            await Task.yield()
        }
        /// The phone types a capital or deletes one, at random. (Were it to delete a letter the laptop's undo
        /// deletes too, the two deletions would overlap: a conflict for a person, `TextOverlap`.)
        func phoneActs() async throws {
            let scalars = Array(await second.model.text.unicodeScalars)
            let capitals = scalars.indices.filter { scalars[$0].properties.isUppercase }
            if !capitals.isEmpty, random.next() % 3 == 0 {
                try await second.edit(.delete(at: random.pick(capitals), count: 1))
            } else {
                let length = scalars.count
                let capital = String(random.pick(Array("XYZW".unicodeScalars)))
                try await second.edit(.insert(at: random.int(in: 0...length), text: capital))
            }
            phone.clock.advance(byMilliseconds: 50)
        }
        func without(_ letter: Unicode.Scalar, _ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != letter }))
        }

        let letters = Array("abcdef".unicodeScalars)
        let steps = random.int(in: 2...letters.count)
        for step in 0..<steps {
            for _ in 0..<random.int(in: 1...5) {
                let length = await first.model.text.unicodeScalars.count
                try await first.edit(.insert(at: random.int(in: 0...length), text: String(letters[step])))
                laptop.clock.advance(byMilliseconds: 50)
                if random.next() % 3 == 0 { try await phoneActs() }
                if random.next() % 2 == 0 { try await sync() }
            }
            laptop.clock.advance(byMilliseconds: 2_000)
            try await first.runDueWork()
        }
        for step in (0..<steps).reversed() {
            for _ in 0..<random.int(in: 0...3) { try await phoneActs() }
            try await sync()
            let before = await first.model.text
            try await first.undo()
            let undone = await first.model.text
            if undone != without(letters[step], before) {
                Issue.record(
                    "seed \(seed): undoing step \(step) made \(undone.debugDescription) of \(before.debugDescription)")
                return
            }
            if random.next() % 2 == 0 {
                try await first.redo()
                let redone = await first.model.text
                if redone != before {
                    Issue.record(
                        "seed \(seed): the redo made \(redone.debugDescription), not \(before.debugDescription)")
                    return
                }
                try await first.undo()
                let again = await first.model.text
                if again != undone {
                    Issue.record(
                        "seed \(seed): undoing the redo made \(again.debugDescription), not \(undone.debugDescription)")
                    return
                }
            }
        }
        #expect(await first.canUndo == false, "seed \(seed): one step a group, whatever arrived during it")
        try await sync()
        let text = await first.model.text
        #expect(await second.model.text == text, "seed \(seed)")
        #expect(text.unicodeScalars.allSatisfy { !letters.contains($0) }, "seed \(seed): \(text.debugDescription)")
    }
}
