import FolioCore
import FolioTestWorkPool
import Testing

@Suite(.workPool) struct VersionVectorTests {
    let a = TestDevices.pool[0]
    let b = TestDevices.pool[1]
    let c = TestDevices.pool[2]

    @Test func emptyVectorNamesNothing() {
        let empty = VersionVector()
        empty.checkInvariants()
        #expect(empty.isEmpty)
        #expect(empty.entries.isEmpty)
        #expect(empty.changeCount == 0)
        #expect(empty[a] == 0)
        #expect(!empty.contains(ChangeID(device: a, seq: 1)))
        #expect(empty.description == "[]")
        #expect(empty == VersionVector(pairs: [(a, 0), (b, 0)]))
    }

    @Test func pairsAreSortedByDeviceAndZerosDropped() {
        let vector = VersionVector(pairs: [(c, 3), (a, 0), (b, 7)])
        vector.checkInvariants()
        #expect(vector.devices == [b, c])
        #expect(vector.entries.map(\.seq) == [7, 3])
        #expect(vector.changeCount == 10)
        #expect(vector == VersionVector(pairs: [(b, 7), (c, 3)]))
        #expect(vector.description == "[\(b): 7, \(c): 3]")
    }

    @Test func sortedEntriesInitializerRejectsNonCanonicalInput() {
        let ok = VersionVector(sortedEntries: [.init(device: a, seq: 1), .init(device: b, seq: 2)])
        #expect(ok == VersionVector(pairs: [(a, 1), (b, 2)]))
        #expect(VersionVector(sortedEntries: []) == VersionVector())
        #expect(VersionVector(sortedEntries: [.init(device: b, seq: 1), .init(device: a, seq: 2)]) == nil)
        #expect(VersionVector(sortedEntries: [.init(device: a, seq: 1), .init(device: a, seq: 2)]) == nil)
        #expect(VersionVector(sortedEntries: [.init(device: a, seq: 1), .init(device: b, seq: 0)]) == nil)
    }

    @Test func subscriptInsertsUpdatesAndRemovesEntries() {
        var vector = VersionVector()
        vector[c] = 2
        vector[a] = 5
        vector[b] = 1
        vector.checkInvariants()
        #expect(vector.devices == [a, b, c])
        vector[b] = 4
        #expect(vector[b] == 4)
        vector[a] = 0
        vector.checkInvariants()
        #expect(vector.devices == [b, c])
        vector[TestDevices.pool[5]] = 0
        #expect(vector.devices == [b, c], "setting an absent device to 0 adds nothing")
        vector.checkInvariants()
    }

    @Test func includeAddsTheChangeAndNeverLowers() {
        var vector = VersionVector(pairs: [(a, 2)])
        vector.include(ChangeID(device: b, seq: 3))
        #expect(vector == VersionVector(pairs: [(a, 2), (b, 3)]))
        vector.include(ChangeID(device: b, seq: 1))
        #expect(vector[b] == 3, "including an older change is a no-op")
        vector.include(ChangeID(device: a, seq: 5))
        #expect(vector[a] == 5)
        vector.checkInvariants()
        #expect(vector.contains(ChangeID(device: b, seq: 1)))
        #expect(vector.contains(ChangeID(device: b, seq: 3)))
        #expect(!vector.contains(ChangeID(device: b, seq: 4)))
        #expect(!vector.contains(ChangeID(device: c, seq: 1)))
    }

    struct CompareCase: Sendable, CustomTestStringConvertible {
        var left: [UInt64]
        var right: [UInt64]
        var expected: CausalOrder
        var testDescription: String { "\(left) vs \(right) is \(expected)" }
    }

    @Test(arguments: [
        CompareCase(left: [1, 2, 0], right: [1, 2, 0], expected: .equal),
        CompareCase(left: [1, 2, 0], right: [1, 3, 0], expected: .before),
        CompareCase(left: [1, 2, 0], right: [0, 2, 0], expected: .after),
        CompareCase(left: [1, 2, 0], right: [2, 1, 0], expected: .concurrent),
        CompareCase(left: [1, 0, 0], right: [0, 1, 0], expected: .concurrent),
        CompareCase(left: [0, 0, 0], right: [0, 0, 1], expected: .before),
        CompareCase(left: [0, 0, 0], right: [0, 0, 0], expected: .equal),
        CompareCase(left: [3, 0, 1], right: [3, 1, 0], expected: .concurrent),
        CompareCase(left: [3, 1, 1], right: [3, 1, 0], expected: .after),
        CompareCase(left: [0, 5, 0], right: [1, 0, 1], expected: .concurrent),
    ])
    func compareExamples(_ example: CompareCase) {
        let devices = [a, b, c]
        let lhs = VersionVector(zip(devices, example.left).map { ($0, $1) })
        let rhs = VersionVector(zip(devices, example.right).map { ($0, $1) })
        #expect(lhs.compare(to: rhs) == example.expected)
        #expect(lhs.isContained(in: rhs) == (example.expected == .equal || example.expected == .before))
    }

    @Test func mergeAndIntersectExamples() {
        let x = VersionVector(pairs: [(a, 3), (b, 1)])
        let y = VersionVector(pairs: [(b, 4), (c, 2)])
        #expect(x.merging(y) == VersionVector(pairs: [(a, 3), (b, 4), (c, 2)]))
        #expect(x.intersecting(y) == VersionVector(pairs: [(b, 1)]))
        var z = x
        z.merge(y)
        #expect(z == x.merging(y))
        #expect(VersionVector(pairs: [(a, 1)]).intersecting(VersionVector(pairs: [(b, 1)])).isEmpty)
    }

    @Test func changesMissingExample() {
        let mine = VersionVector(pairs: [(a, 5), (b, 2), (c, 1)])
        let theirs = VersionVector(pairs: [(a, 2), (b, 2)])
        let missing = mine.changesMissing(from: theirs)
        #expect(missing.map(\.device) == [a, c])
        #expect(missing.map(\.seqs) == [3...5, 1...1])
        #expect(theirs.changesMissing(from: mine).isEmpty)
        #expect(mine.changesMissing(from: mine).isEmpty)
    }

    @Test func equalVectorsHashAlike() {
        let x = VersionVector(pairs: [(a, 1), (c, 2)])
        var y = VersionVector()
        y[c] = 2
        y[b] = 9
        y[a] = 1
        y[b] = 0
        #expect(x == y)
        #expect(Set([x, y]).count == 1)
    }
}
