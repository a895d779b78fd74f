import FolioMerge
import FolioModels
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@Suite(.workPool) struct TextEventGraphTests {
    private func scalars(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars) }

    @Test func editsOfOneLineMadeApartBothLand() throws {
        var graph = TextEventGraph<Int>(base: scalars("the cat sat\n"))
        try graph.add(agent: 1, parents: [], edits: [.insert(at: 4, text: "black ")])
        try graph.add(agent: 2, parents: [], edits: [.delete(at: 8, count: 3), .insert(at: 8, text: "slept")])
        #expect(graph.text == "the black cat slept\n")
    }

    /// Two people type a word each at one place at once: each word stays whole, in the same order either way.
    @Test func runsTypedAtOnePlaceStayContiguous() throws {
        func typed(firstAgentFirst: Bool) throws -> String {
            var graph = TextEventGraph<Int>(base: scalars("[]"))
            var last: [Int: Int] = [:]
            let words = [1: Array("alpha".unicodeScalars), 2: Array("omega".unicodeScalars)]
            let agents = firstAgentFirst ? [1, 2] : [2, 1]
            // Keystroke by keystroke, the two agents taking turns, each on its own previous keystroke.
            for offset in 0..<5 {
                for agent in agents {
                    let parents = last[agent].map { [$0] } ?? []
                    last[agent] = try graph.add(
                        agent: agent, parents: parents,
                        edits: [.insert(at: 1 + offset, scalars: [words[agent]![offset]])])
                }
            }
            return graph.text
        }
        #expect(try typed(firstAgentFirst: true) == "[alphaomega]")
        #expect(try typed(firstAgentFirst: false) == "[alphaomega]")
    }

    /// One device types inside a paragraph while another deletes the paragraph: the typing survives, alone.
    @Test func typingInsideADeletedParagraphSurvives() throws {
        var graph = TextEventGraph<Int>(base: scalars("keep\nold paragraph\nend\n"))
        try graph.add(agent: 1, parents: [], edits: [.delete(at: 5, count: 14)])
        let typing = try graph.add(agent: 2, parents: [], edits: [.insert(at: 9, text: "new")])
        try graph.add(agent: 2, parents: [typing], edits: [.insert(at: 12, text: "!")])
        #expect(graph.text == "keep\nnew!end\n")
    }

    @Test func aMergedVersionIsEditedAtItsOwnPositions() throws {
        var graph = TextEventGraph<String>()
        let a = try graph.add(agent: "a", parents: [], edits: [.insert(at: 0, text: "ac")])
        let b = try graph.add(agent: "b", parents: [a], edits: [.insert(at: 1, text: "b")])
        let c = try graph.add(agent: "c", parents: [a], edits: [.insert(at: 2, text: "d")])
        // On "abcd", the merge of b and c.
        try graph.add(agent: "a", parents: [b, c], edits: [.delete(at: 1, count: 2), .insert(at: 1, text: "-")])
        #expect(graph.text == "a-d")
    }

    @Test func aReplacementMergesAsTheEditOfWhatDiffers() throws {
        var graph = TextEventGraph<Int>(base: scalars("title\nbody\nfooter\n"))
        try graph.add(agent: 1, parents: [], edits: [.replaceAll(with: scalars("Title\nbody\nfooter\n"))])
        try graph.add(agent: 2, parents: [], edits: [.replaceAll(with: scalars("title\nbody\nFooter\n"))])
        #expect(graph.text == "Title\nbody\nFooter\n")
    }

    @Test func editsOutOfBoundsAreSkippedAndCounted() throws {
        var graph = TextEventGraph<Int>(base: scalars("abc"))
        try graph.add(
            agent: 1, parents: [],
            edits: [
                .insert(at: 4, text: "x"), .delete(at: 2, count: 2), .delete(at: -1, count: 1),
                .insert(at: 3, text: "d"),
            ]
        )
        #expect(graph.text == "abcd")
        #expect(graph.skippedEdits == 3)
    }

    @Test func aParentThatIsNotAnEarlierEventIsRefused() throws {
        var graph = TextEventGraph<Int>()
        try graph.add(agent: 1, parents: [], edits: [.insert(at: 0, text: "a")])
        #expect(throws: TextEventGraph<Int>.Failure.unknownParent(1)) {
            try graph.add(agent: 1, parents: [1], edits: [.insert(at: 0, text: "b")])
        }
        #expect(throws: TextEventGraph<Int>.Failure.unknownParent(-1)) {
            try graph.add(agent: 1, parents: [-1], edits: [])
        }
        #expect(graph.eventCount == 1)
        #expect(graph.text == "a")
    }

    /// A long history splits the list into many blocks; the text still reads in order.
    @Test func longTypingReadsBackInOrder() throws {
        var graph = TextEventGraph<Int>(base: scalars(String(repeating: "-", count: 1_000)))
        var parent: Int?
        var expected = Array(String(repeating: "-", count: 1_000).unicodeScalars)
        for index in 0..<3_000 {
            let position = (index * 7919) % (expected.count + 1)
            let scalar = Unicode.Scalar(UInt8(97 + index % 26))
            parent = try graph.add(
                agent: 1, parents: parent.map { [$0] } ?? [], edits: [.insert(at: position, scalars: [scalar])])
            expected.insert(scalar, at: position)
            if index % 3 == 0 {
                parent = try graph.add(agent: 1, parents: [parent!], edits: [.delete(at: position / 2, count: 1)])
                expected.remove(at: position / 2)
            }
        }
        #expect(graph.text == String(String.UnicodeScalarView(expected)))
    }
}

/// The friendsforever trace: two people typing into one document at once.
@Suite(.workPool) struct ConcurrentTraceTests {
    static let friendsforever = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // FolioMergeTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the package
        .appendingPathComponent("Benchmarks/traces/friendsforever.json.gz")

    @Test func friendsforeverReplaysToItsFinalText() throws {
        let trace = try ConcurrentEditingTrace.load(Self.friendsforever)
        var graph = TextEventGraph<Int>(base: Array(trace.startContent.unicodeScalars))
        for transaction in trace.transactions {
            try graph.add(agent: transaction.agent, parents: transaction.parents, edits: transaction.edits)
        }
        #expect(graph.skippedEdits == 0)
        #expect(graph.text == trace.endContent)
    }
}

extension ConcurrentTraceTests {
    /// The same trace in another order that puts parents first (by depth, then agent): the same text.
    @Test func friendsforeverInAnotherOrderGivesTheSameText() throws {
        let trace = try ConcurrentEditingTrace.load(Self.friendsforever)
        var depth: [Int] = []
        for transaction in trace.transactions { depth.append(1 + (transaction.parents.map { depth[$0] }.max() ?? 0)) }
        let order = trace.transactions.indices.sorted {
            (depth[$0], trace.transactions[$0].agent, $0) < (depth[$1], trace.transactions[$1].agent, $1)
        }
        var graph = TextEventGraph<Int>(base: Array(trace.startContent.unicodeScalars))
        var position: [Int: Int] = [:]
        for index in order {
            let transaction = trace.transactions[index]
            position[index] = try graph.add(
                agent: transaction.agent, parents: transaction.parents.map { position[$0]! }, edits: transaction.edits)
        }
        #expect(graph.skippedEdits == 0)
        #expect(graph.text == trace.endContent)
    }
}

extension ConcurrentEditingTrace.Transaction {
    /// The transaction's operations as the graph's edits (every text operation is one).
    fileprivate var edits: [TextEdit] { operations.flatMap { TextDocument.textEdits(of: $0) ?? [] } }
}
