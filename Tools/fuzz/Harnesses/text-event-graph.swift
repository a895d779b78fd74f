// text-event-graph: concurrent text edit events, with their parents, replayed by `TextEventGraph`.
// Untrusted bytes make up to 24 events: an agent (one of four, told apart per event), up to three parents (any number, so also unknown ones, which must
// be refused with nothing added) and up to four edits at any position or count. Oracles: the graph never traps; a
// refused event leaves the text and the event count as they were; replaying the accepted events again in another
// order that puts parents first gives the same text and the same number of skipped edits.
import FolioMerge
import Foundation

enum Harness {
    struct Event {
        var agent: Int
        var parents: [Int]
        var edits: [TextEdit]
    }

    static let base = Array("héllo wörld 🌍\n".unicodeScalars)

    static func run(_ input: UnsafeRawBufferPointer) {
        var bytes = FuzzInput(input)
        var graph = TextEventGraph<Int>(base: base)
        var accepted: [Event] = []
        while !bytes.isAtEnd, accepted.count < 24 {
            // Unique per event, as a change id is: concurrent events of one agent would tie.
            let agent = bytes.int(below: 4) * 1_000 + accepted.count
            let parents = (0..<bytes.int(below: 4)).map { _ in Int(Int8(bitPattern: bytes.byte())) }
            var edits: [TextEdit] = []
            for _ in 0..<bytes.int(below: 5) {
                switch bytes.int(below: 4) {
                case 0:
                    edits.append(.insert(at: position(&bytes), scalars: Array(bytes.string(upTo: 6).unicodeScalars)))
                case 1: edits.append(.delete(at: position(&bytes), count: position(&bytes)))
                case 2: edits.append(.append(scalars: Array(bytes.string(upTo: 4).unicodeScalars)))
                default: edits.append(.replaceAll(with: Array(bytes.string(upTo: 12).unicodeScalars)))
                }
            }
            let before = (graph.text, graph.eventCount, graph.skippedEdits)
            do {
                try graph.add(agent: agent, parents: parents, edits: edits)
                accepted.append(Event(agent: agent, parents: parents, edits: edits))
            } catch {
                precondition(
                    (graph.text, graph.eventCount, graph.skippedEdits) == before, "a refused event changed the graph")
            }
        }
        // Again, latest agent first among the events whose parents are placed.
        var again = TextEventGraph<Int>(base: base)
        var placed: [Int: Int] = [:]
        while placed.count < accepted.count {
            let ready = accepted.indices.filter { index in
                placed[index] == nil && accepted[index].parents.allSatisfy { placed[$0] != nil }
            }
            let next = ready.max { (accepted[$0].agent, -$0) < (accepted[$1].agent, -$1) }!
            let event = accepted[next]
            placed[next] = try! again.add(
                agent: event.agent, parents: event.parents.map { placed[$0]! }, edits: event.edits)
        }
        precondition(again.text == graph.text, "another order gave another text")
        precondition(again.skippedEdits == graph.skippedEdits, "another order skipped other edits")
    }

    /// A position or count: small ones mostly, sometimes negative or huge.
    static func position(_ bytes: inout FuzzInput) -> Int {
        switch bytes.int(below: 8) {
        case 0: Int(Int64(bitPattern: bytes.interestingUInt64()))
        case 1: -Int(bytes.byte())
        default: Int(bytes.byte() % 24)
        }
    }

    static func seeds() -> [[UInt8]] {
        [
            // Two agents insert at the start on the base, then one merges both and deletes.
            [0, 0, 1, 0, 2, 3, 0x61, 0x62, 0x63, 1, 0, 1, 0, 2, 2, 0x78, 0x79, 2, 2, 0, 1, 1, 1, 2, 4, 2, 3],
            // A parent that is no earlier event, then a replacement.
            [1, 1, 9, 1, 3, 5, 0x6e, 0x65, 0x77, 0x21, 0x0a],
        ]
    }
}
