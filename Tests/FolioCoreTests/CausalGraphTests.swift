import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@Suite(.workPool) struct CausalGraphTests {
    private func graph(_ changes: [Change]) -> CausalGraph {
        let graph = CausalGraph(changes.map(CausalNode.init))
        graph.checkInvariants()
        return graph
    }

    /// A and B fork from A1, and each merges the other: two heads whose common past has two heads of its own.
    ///
    /// ```
    /// 0 A1 ── 2 A2 ──┬── 3 A3
    ///   └──── 1 B1 ──┴── 4 B2
    /// ```
    static let crissCross: [(device: Int, parents: [Int])] = [
        (0, []), (1, [0]), (0, [0]), (0, [2, 1]), (1, [1, 2]),
    ]

    @Test func anEmptyGraphHasNothing() {
        let graph = CausalGraph()
        #expect(graph.count == 0)
        #expect(graph.heads.isEmpty)
        #expect(graph.vector.isEmpty)
        #expect(graph.topologicalOrder().isEmpty)
        #expect(graph.firstInconsistency() == nil)
        #expect(graph.commonAncestry(of: []).vector.isEmpty)
        #expect(graph.commonAncestry(of: []).heads.isEmpty)
    }

    @Test func aLinearHistoryHasOneHead() {
        let changes = HistoryBuilder.history([(0, []), (0, [0]), (1, [1]), (0, [2])])
        let graph = graph(changes)
        #expect(graph.count == 4)
        #expect(graph.heads.map(\.hash) == [changes[3].hash])
        #expect(graph.vector == changes[3].vector)
        #expect(graph[changes[2].id] == CausalNode(changes[2]))
        #expect(graph[changes[2].hash] == CausalNode(changes[2]))
        #expect(graph[fakeHash("absent")] == nil)
        #expect(graph[ChangeID(device: TestDevices.pool[5], seq: 1)] == nil)
    }

    @Test func aForkHasTwoHeadsInCausalOrderAndAMergeJoinsThem() {
        // B's change and A's second change are concurrent, both with lamport 2: the tie goes to the lower device.
        var builder = HistoryBuilder()
        let root = builder.append(device: 0, parents: [])
        let onB = builder.append(device: 1, parents: [0])
        let onA = builder.append(device: 0, parents: [0])
        #expect(onA.vector.compare(to: onB.vector) == .concurrent)
        var graph = graph(builder.changes)
        #expect(graph.heads.map(\.id) == [onA.id, onB.id])
        #expect(graph.vector == onA.vector.merging(onB.vector))

        let merge = builder.append(device: 1, parents: [1, 2])
        graph.insert(CausalNode(merge))
        graph.checkInvariants()
        #expect(graph.heads.map(\.id) == [merge.id])
        #expect(merge.lamport == 3)
        #expect(graph.isAncestor(root.id, of: merge.id))
        #expect(graph.isAncestor(onA.id, of: merge.id))
        #expect(graph.isAncestor(onB.id, of: merge.id))
    }

    @Test func headsDoNotDependOnInsertionOrder() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let forward = graph(changes)
        let backward = graph(changes.reversed())
        #expect(forward.heads.map(\.hash) == [changes[3].hash, changes[4].hash])
        #expect(backward.heads.map(\.hash) == forward.heads.map(\.hash))
        // With only a child present, its absent parent is no head.
        let orphan = CausalGraph([CausalNode(changes[3])])
        #expect(orphan.heads.map(\.hash) == [changes[3].hash])
    }

    @Test func insertingAChangeTwiceChangesNothing() {
        let changes = HistoryBuilder.history([(0, []), (1, [0])])
        var graph = graph(changes)
        graph.insert(CausalNode(changes[0]))
        graph.insert(CausalNode(changes[1]))
        #expect(graph.count == 2)
        #expect(graph.heads.map(\.hash) == [changes[1].hash])
        graph.checkInvariants()
    }

    @Test func ancestryFollowsTheVectors() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let graph = graph(changes)
        let ids = changes.map(\.id)
        // Expected ancestry of the criss-cross, index → ancestors.
        let ancestors: [Int: Set<Int>] = [0: [], 1: [0], 2: [0], 3: [0, 1, 2], 4: [0, 1, 2]]
        for descendant in ids.indices {
            for ancestor in ids.indices {
                #expect(
                    graph.isAncestor(ids[ancestor], of: ids[descendant]) == ancestors[descendant]!.contains(ancestor),
                    "is \(ancestor) an ancestor of \(descendant)?")
            }
        }
        #expect(!graph.isAncestor(ids[0], of: ChangeID(device: TestDevices.pool[6], seq: 1)), "unknown descendant")
    }

    @Test func commonAncestryOfAForkIsTheForkPoint() {
        let changes = HistoryBuilder.history([(0, []), (0, [0]), (1, [1]), (0, [1]), (2, [2])])
        let graph = graph(changes)
        let ancestry = graph.commonAncestry(of: [changes[3].hash, changes[4].hash])
        #expect(ancestry.heads == [changes[1].hash])
        #expect(ancestry.vector == changes[1].vector)
        // Order of the versions does not matter.
        #expect(graph.commonAncestry(of: [changes[4].hash, changes[3].hash]) == ancestry)
    }

    @Test func commonAncestryOfOneVersionIsItself() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let graph = graph(changes)
        let ancestry = graph.commonAncestry(of: [changes[3].hash])
        #expect(ancestry.heads == [changes[3].hash])
        #expect(ancestry.vector == changes[3].vector)
        // A change and its ancestor: the ancestor.
        #expect(graph.commonAncestry(of: [changes[3].hash, changes[1].hash]).heads == [changes[1].hash])
    }

    @Test func commonAncestryOfACrissCrossHasTwoHeads() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let graph = graph(changes)
        let heads = graph.heads.map(\.hash)
        #expect(heads.count == 2)
        let ancestry = graph.commonAncestry(of: heads)
        // A2 and B1 both have lamport 2; A sorts first.
        #expect(ancestry.heads == [changes[2].hash, changes[1].hash])
        #expect(ancestry.vector == VersionVector(pairs: [(TestDevices.pool[0], 2), (TestDevices.pool[1], 1)]))
        #expect(ancestry.vector == changes[1].vector.merging(changes[2].vector))
    }

    @Test func commonAncestryOfUnrelatedRootsIsEmpty() {
        let changes = HistoryBuilder.history([(0, []), (1, []), (0, [0])])
        let graph = graph(changes)
        let ancestry = graph.commonAncestry(of: [changes[2].hash, changes[1].hash])
        #expect(ancestry.heads.isEmpty)
        #expect(ancestry.vector.isEmpty)
    }

    @Test func commonAncestryOfThreeVersions() {
        // Three devices branch from a shared history at different points.
        let changes = HistoryBuilder.history([
            (0, []), (1, [0]), (2, [1]), (0, [1]), (1, [1]), (2, [2]),
        ])
        let graph = graph(changes)
        let ancestry = graph.commonAncestry(of: [changes[3].hash, changes[4].hash, changes[5].hash])
        #expect(ancestry.heads == [changes[1].hash])
        #expect(ancestry.vector == changes[1].vector)
    }

    @Test func changesInAVectorAreThatVectorsPastInOrder() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let graph = graph(changes)
        #expect(graph.changes(in: changes[3].vector).map(\.hash) == [0, 2, 1, 3].map { changes[$0].hash })
        #expect(graph.changes(in: VersionVector()).isEmpty)
        #expect(graph.changes(in: graph.vector).map(\.hash) == graph.topologicalOrder().map(\.hash))
    }

    @Test func topologicalOrderIsLamportThenDevice() {
        let changes = HistoryBuilder.history(Self.crissCross)
        let order = graph(changes).topologicalOrder().map(\.hash)
        #expect(order == [0, 2, 1, 3, 4].map { changes[$0].hash })
    }

    /// Random valid histories inserted in shuffled orders: the order is always the same, puts parents first, and
    /// breaks lamport ties by device.
    @Test func topologicalOrderIsDeterministicAndRespectsParents() {
        let seed = TestSeed.make()
        print("CausalGraphTests.topologicalOrder seed \(seed) (replay with FOLIO_SEED=\(seed))")
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<60 {
            check.iteration = iteration
            let changes = HistoryBuilder.random(
                steps: generator.int(in: 1...30), deviceCount: generator.int(in: 3...5),
                using: &generator)
            let reference = CausalGraph(changes.map(CausalNode.init))
            check.expect(
                reference.firstInconsistency() == nil,
                "generated history is inconsistent: \(reference.firstInconsistency() ?? "")")
            let order = reference.topologicalOrder()
            check.expect(order.count == changes.count, "order has \(order.count) of \(changes.count) changes")
            var position: [ChangeHash: Int] = [:]
            for (index, node) in order.enumerated() { position[node.hash] = index }
            for node in order {
                for parent in node.parents {
                    check.expect(position[parent]! < position[node.hash]!, "\(node.id) comes before a parent")
                }
            }
            for (earlier, later) in zip(order, order.dropFirst()) {
                check.expect(
                    (earlier.lamport, earlier.id.device) < (later.lamport, later.id.device)
                        || (earlier.lamport == later.lamport && earlier.id.device == later.id.device
                            && earlier.id.seq < later.id.seq),
                    "\(earlier.id) then \(later.id) is not lamport-then-device order")
            }
            let heads = reference.heads.map(\.hash)
            for _ in 0..<4 {
                let shuffled = CausalGraph(changes.shuffled(using: &generator).map(CausalNode.init))
                check.expect(
                    shuffled.topologicalOrder().map(\.hash) == order.map(\.hash),
                    "topological order depends on insertion order")
                check.expect(shuffled.heads.map(\.hash) == heads, "heads depend on insertion order")
                check.expect(shuffled.vector == reference.vector, "the vector depends on insertion order")
            }
            // Heads are exactly the changes that are no one's parent, and the graph's vector is their union.
            let referenced = Set(changes.flatMap(\.parents))
            check.expect(
                Set(heads) == Set(changes.map(\.hash)).subtracting(referenced), "heads are not the unreferenced changes"
            )
            check.expect(
                reference.vector == changes.reduce(VersionVector()) { $0.merging($1.vector) },
                "the graph's vector is not the union")
            // Common ancestry of the heads: a lower bound of every head's vector, and its heads lie inside it.
            let ancestry = reference.commonAncestry(of: heads)
            ancestry.vector.checkInvariants()
            for head in heads {
                check.expect(ancestry.vector.isContained(in: reference[head]!.vector), "ancestry above a head")
            }
            check.expect(
                ancestry.heads.allSatisfy { ancestry.vector.contains(reference[$0]!.id) },
                "an ancestry head outside the ancestry")
            check.expect(
                ancestry.heads.reduce(VersionVector()) { $0.merging(reference[$1]!.vector) } == ancestry.vector,
                "the ancestry heads do not span the ancestry vector")
            if check.shouldStop { break }
        }
    }

    // MARK: Inconsistencies

    @Test func aValidHistoryHasNoInconsistency() {
        #expect(graph(HistoryBuilder.history(Self.crissCross)).firstInconsistency() == nil)
    }

    @Test func aMissingParentIsReported() throws {
        let changes = HistoryBuilder.history([(0, []), (1, [0]), (1, [1])])
        let graph = CausalGraph([changes[0], changes[2]].map(CausalNode.init))
        let problem = try #require(graph.firstInconsistency())
        #expect(problem.contains(changes[1].hash.shortHex), "\(problem)")
        #expect(problem.contains("not in the history"), "\(problem)")
    }

    @Test func aLamportNotAboveItsParentIsReported() throws {
        let changes = HistoryBuilder.history([(0, []), (1, [0])])
        var node = CausalNode(changes[1])
        node.lamport = changes[0].lamport
        let graph = CausalGraph([CausalNode(changes[0]), node])
        let problem = try #require(graph.firstInconsistency())
        #expect(problem.contains("lamport"), "\(problem)")
        #expect(problem.contains("\(changes[1].id)"), "\(problem)")
    }

    @Test func aWrongVectorIsReported() throws {
        let changes = HistoryBuilder.history([(0, []), (1, [0])])
        var extra = CausalNode(changes[1])
        extra.vector[TestDevices.pool[4]] = 1
        let problem = try #require(CausalGraph([CausalNode(changes[0]), extra]).firstInconsistency())
        #expect(problem.contains("vector"), "\(problem)")

        var lacking = CausalNode(changes[1])
        lacking.vector[TestDevices.pool[0]] = 0
        #expect(CausalGraph([CausalNode(changes[0]), lacking]).firstInconsistency() != nil)
    }

    @Test func aGapInADevicesSequenceIsReported() throws {
        // A device's second change made without its first in its past.
        let device = TestDevices.pool[0]
        let second = CausalNode(
            id: ChangeID(device: device, seq: 2), hash: fakeHash("A2"), parents: [],
            vector: VersionVector(pairs: [(device, 2)]), lamport: 1)
        let problem = try #require(CausalGraph([second]).firstInconsistency())
        #expect(problem.contains("previous change"), "\(problem)")
    }

    @Test func theFirstInconsistencyIsTheEarliestInCausalOrder() throws {
        let changes = HistoryBuilder.history([(0, []), (0, [0]), (0, [1]), (0, [2])])
        var early = CausalNode(changes[1])
        early.vector[TestDevices.pool[3]] = 1
        var late = CausalNode(changes[3])
        late.vector[TestDevices.pool[3]] = 7
        let graph = CausalGraph([late, CausalNode(changes[2]), early, CausalNode(changes[0])])
        let problem = try #require(graph.firstInconsistency())
        #expect(problem.hasPrefix("\(changes[1].id)"), "\(problem)")
    }

    @Test func checkInvariantsTrapsOnAnInconsistentGraph() async {
        await #expect(processExitsWith: .failure) {
            let device = TestDevices.pool[0]
            let orphan = CausalNode(
                id: ChangeID(device: device, seq: 1), hash: fakeHash("orphan"),
                parents: [fakeHash("missing")], vector: VersionVector(pairs: [(device, 1)]), lamport: 2)
            CausalGraph([orphan]).checkInvariants()
        }
    }
}
