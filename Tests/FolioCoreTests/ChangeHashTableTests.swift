import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct ChangeHashTableTests {
    /// Random hashes, many sharing their first eight bytes (the table's key), some repeated: every hash is found at
    /// its last position, and hashes not in the list are not found.
    @Test func findsEveryHashAtItsLastPosition() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        for count in [0, 1, 7, 8, 9, 100, 1_000] {
            var hashes: [ChangeHash] = []
            for _ in 0..<count {
                if !hashes.isEmpty, generator.chance(1, in: 10) {
                    hashes.append(hashes[Int(generator.next() % UInt64(hashes.count))])
                    continue
                }
                var bytes = (0..<32).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                // Keys repeat: a quarter of the hashes share their first eight bytes with others, and another
                // quarter share the low sixteen bits of their key (as hashes chosen to crowd one slot would).
                if generator.chance(1, in: 4) {
                    bytes.replaceSubrange(0..<8, with: repeatElement(0x5A, count: 8))
                } else if generator.chance(1, in: 3) {
                    bytes.replaceSubrange(6..<8, with: [0xA5, 0x5A])
                }
                hashes.append(ChangeHash(bytes: bytes))
            }
            let table = ChangeHashTable(count: hashes.count) { hashes[$0] }
            var last: [ChangeHash: Int] = [:]
            for (position, hash) in hashes.enumerated() { last[hash] = position }
            for hash in hashes {
                #expect(table.index(of: hash) { hashes[$0] } == last[hash], "seed \(seed), \(count) hashes")
            }
            for _ in 0..<50 {
                var bytes = (0..<32).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                if generator.chance(1, in: 2) { bytes.replaceSubrange(0..<8, with: repeatElement(0x5A, count: 8)) }
                let absent = ChangeHash(bytes: bytes)
                guard last[absent] == nil else { continue }
                #expect(table.index(of: absent) { hashes[$0] } == nil, "seed \(seed), \(count) hashes")
            }
        }
    }

    @Test func findsChangesOfAList() {
        var builder = HistoryBuilder()
        for step in 0..<300 { builder.append(device: step % 3, parents: step == 0 ? [] : [step - 1]) }
        let changes = builder.changes
        let table = ChangeHashTable(changes)
        for (position, change) in changes.enumerated() {
            #expect(table.index(of: change.hash, in: changes) == position)
        }
        #expect(table.index(of: ChangeHash(hashing: [1]), in: changes) == nil)
    }
}
