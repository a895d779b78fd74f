// text-operations: a group of text operations decoded from untrusted bytes, under the undo law.
// A group of `TextDocument.Operation`s decoded from untrusted bytes (an edit's payload) and
// applied to a short text. Oracles: `OperationLaws` (the undo law, redo, combine, refusals change nothing, the
// group's encoding and the snapshot round-trip) and the text storage's own invariants.
import FolioCore
import FolioModels
import Foundation

enum Harness {
    static let start = TextDocument(text: "héllo\nwörld 🌍\n")

    static func run(_ input: UnsafeRawBufferPointer) {
        OperationLaws<TextDocument>.check(group: Array(input), from: start) { $0.storage._checkInvariants() }
    }

    static func seeds() -> [[UInt8]] {
        typealias Op = TextDocument.Operation
        let groups: [[Op]] = [
            [.insert(at: 0, text: "a")],
            [.insert(at: 3, text: "xyz"), .insert(at: 6, text: "w"), .delete(at: 2, count: 4)],
            [.delete(at: 5, count: 1), .delete(at: 4, count: 1), .delete(at: 4, count: 2)],
            [.append("tail\u{301}"), .replace("new text"), .insert(at: 8, text: "!")],
            [.insert(at: 14, text: "end"), .delete(at: 0, count: 17)],
            [.delete(at: -1, count: 1), .insert(at: 100, text: "x")],
        ]
        return groups.map { Array(Op.encodeGroup($0)) }
    }
}
