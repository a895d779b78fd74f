import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct ChangeHashTests {
    @Test func hashesWithSHA256() {
        // The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
        let hash = ChangeHash(hashing: Array("abc".utf8))
        #expect(hash.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hash.description == hash.hex)
        #expect(hash.shortHex == "ba7816bf8f01")
        #expect(hash.prefix64 == Int64(bitPattern: 0xba78_16bf_8f01_cfea))
        #expect(hash.bytes.prefix(4) == [0xba, 0x78, 0x16, 0xbf])
        #expect(hash.bytes.count == 32)
        #expect(ChangeHash(bytes: hash.bytes) == hash)
    }

    @Test func bytesRoundTripAndOrderIsByteOrder() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var hashes: [ChangeHash] = []
        for _ in 0..<200 {
            var bytes = (0..<32).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Share long prefixes so that later words decide the order too.
            if generator.chance(1, in: 2) { bytes.replaceSubrange(0..<24, with: repeatElement(0x5A, count: 24)) }
            let hash = ChangeHash(bytes: bytes)
            #expect(hash.bytes == bytes, "seed \(seed)")
            #expect(ChangeHash(bytes: hash.bytes) == hash, "seed \(seed)")
            hashes.append(hash)
        }
        let sorted = hashes.sorted()
        for (lower, higher) in zip(sorted, sorted.dropFirst()) {
            #expect(!higher.bytes.lexicographicallyPrecedes(lower.bytes), "seed \(seed)")
            #expect(lower.hex <= higher.hex, "seed \(seed)")
        }
    }

    @Test func equalHashesAreInterchangeableInSets() {
        let first = ChangeHash(hashing: [1, 2, 3])
        let again = ChangeHash(hashing: [1, 2, 3])
        let other = ChangeHash(hashing: [1, 2, 4])
        #expect(first == again)
        #expect(first != other)
        #expect(Set([first, again, other]).count == 2)
    }
}
