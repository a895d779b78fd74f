import FolioCore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

@testable import FolioDocuments

@Suite(.workPool) struct ReplayTailTests {
    /// Lookups that miss the changes just before their namer are answered first by reading every key, then by the
    /// table: both find every change at its index, and neither finds a hash the tail does not hold.
    @Test func findsEveryChangeBeforeAndAfterItsTableIsBuilt() {
        // One device's chain of 300 changes.
        let device = DeviceID(using: SeededIdentifierSource(seed: 1))
        let document = DocumentID(using: SeededIdentifierSource(seed: 2))
        var changes: [Change] = []
        var vector = VersionVector()
        for seq in UInt64(1)...300 {
            let id = ChangeID(device: device, seq: seq)
            vector.include(id)
            changes.append(
                Change(
                    document: document, id: id, parents: changes.last.map { [$0.hash] } ?? [],
                    vector: vector, lamport: seq, wallTime: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                    kind: .edit(Edit(operations: Data("step \(seq)".utf8)))))
        }
        let tail = ReplayTail(changes)
        let absent = ChangeHash(hashing: [1])
        // Named by the first change: no change is nearby, so every lookup goes past the window. The absent hash is
        // asked for among the scans and again once the table answers.
        #expect(tail.index(of: absent, before: 0) == nil)
        for (index, change) in changes.enumerated().reversed() {
            #expect(tail.index(of: change.hash, before: 0) == index)
        }
        #expect(tail.index(of: absent, before: 0) == nil)
        #expect(ReplayTail.scans < changes.count)
        // Named by a change just after it: found nearby.
        for index in stride(from: 0, to: changes.count - 1, by: 17) {
            #expect(tail.nearbyIndex(of: changes[index].hash, before: index + 1) == index)
        }
    }
}
