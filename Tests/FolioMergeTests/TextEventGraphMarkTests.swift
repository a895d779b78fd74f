import FolioMerge
import FolioTestWorkPool
import Testing

/// Places marked in a text's version, found again in the merged text (`TextEventGraph.mergedPositions(of:)`).
@Suite(.workPool) struct TextEventGraphMarkTests {
    func scalars(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars) }

    /// A mark event on `parents` that types one scalar at each of `positions` (highest first, so that each
    /// position is one of the parents' text).
    func mark(_ graph: inout TextEventGraph<Int>, agent: Int, parents: [Int], at positions: [Int]) throws -> Int {
        let edits = positions.sorted(by: >).map { TextEdit.insert(at: $0, scalars: ["\u{FFFC}"]) }
        return try graph.add(agent: agent, parents: parents, edits: edits)
    }

    @Test func aMarkStaysAfterItsScalarWhenOthersTypeThereLater() throws {
        var graph = TextEventGraph<Int>(base: scalars("abc"))
        let typed = try graph.add(agent: 5, parents: [], edits: [.insert(at: 3, text: "Z")])
        let before = try graph.add(agent: 6, parents: [typed], edits: [.insert(at: 0, text: "xy")])
        // A cursor after "c" of the base, seen by a device that has none of the events.
        let cursor = try mark(&graph, agent: 0, parents: [], at: [3])
        #expect(graph.text == "xyabc\u{FFFC}Z")
        #expect(graph.mergedPositions(of: [cursor]) == [[5]])
        _ = before
    }

    @Test func aMarkFollowsDeletesAndTypingBeforeIt() throws {
        var graph = TextEventGraph<Int>(base: scalars("hello world"))
        let seen = try graph.add(agent: 1, parents: [], edits: [.insert(at: 5, text: ",")])
        // "world" selected in "hello, world" (7..<12), then "hello" replaced with "big" by another device.
        let selection = try mark(&graph, agent: 0, parents: [seen], at: [12, 7])
        _ = try graph.add(agent: 2, parents: [seen], edits: [.delete(at: 0, count: 5), .insert(at: 0, text: "big")])
        #expect(graph.text == "big, \u{FFFC}world\u{FFFC}")
        #expect(graph.mergedPositions(of: [selection]) == [[5, 10]])
    }

    @Test func aMarkWhoseScalarWasDeletedStaysAtItsPlace() throws {
        var graph = TextEventGraph<Int>(base: scalars("abcdef"))
        let cursor = try mark(&graph, agent: 0, parents: [], at: [3])
        _ = try graph.add(agent: 3, parents: [], edits: [.delete(at: 1, count: 4)])
        #expect(graph.mergedPositions(of: [cursor]) == [[1]])
    }

    @Test func marksOfSeveralVersionsAreFoundInOneReplay() throws {
        var graph = TextEventGraph<Int>(base: scalars("ab"))
        let one = try graph.add(agent: 1, parents: [], edits: [.insert(at: 2, text: "cd")])
        let other = try graph.add(agent: 2, parents: [], edits: [.insert(at: 0, text: "12")])
        let first = try mark(&graph, agent: 0, parents: [one], at: [4])
        let second = try mark(&graph, agent: 0, parents: [other], at: [2])
        #expect(graph.mergedPositions(of: [first, second]) == [[6], [2]])
    }
}
