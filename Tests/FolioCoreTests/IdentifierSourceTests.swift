import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

@Suite(.workPool) struct IdentifierSourceTests {
    private func sequence(_ source: some IdentifierSource, count: Int = 100) -> [UUIDBytes] {
        (0..<count).map { _ in source.next() }
    }

    /// Version 4, variant 10: the shape `SeededIdentifierSource` promises and libuuid produces.
    private func isVersion4(_ uuid: UUIDBytes) -> Bool {
        uuid.high >> 12 & 0xF == 4 && uuid.low >> 62 == 0b10
    }

    @Test func sameSeedSameSequence() {
        let seed = TestSeed.make()
        #expect(
            sequence(SeededIdentifierSource(seed: seed)) == sequence(SeededIdentifierSource(seed: seed)),
            "seed \(seed)")
    }

    @Test func differentSeedsDiffer() {
        let seed = TestSeed.make()
        let mine = sequence(SeededIdentifierSource(seed: seed))
        let theirs = sequence(SeededIdentifierSource(seed: seed &+ 1))
        #expect(mine != theirs, "seed \(seed)")
        #expect(Set(mine).isDisjoint(with: theirs), "seed \(seed): sequences of neighbouring seeds overlap")
    }

    @Test func seededValuesAreDistinctAndShapedLikeVersion4() {
        let seed = TestSeed.make()
        let values = sequence(SeededIdentifierSource(seed: seed), count: 2000)
        #expect(Set(values).count == values.count, "seed \(seed)")
        #expect(values.allSatisfy(isVersion4), "seed \(seed)")
        #expect(values.allSatisfy { $0.description.dropFirst(14).first == "4" }, "seed \(seed)")
    }

    /// Pinned values: the sequence must be the same on every platform and in every release, since simulator runs
    /// are replayed from their seeds.
    @Test func theSeededSequenceIsPinned() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
        let first = SeededIdentifierSource(seed: 0).next()
        #expect(first == UUIDBytes(high: 0xE220_A839_7B1D_4DAF, low: 0xAE78_9E6A_A1B9_65F4))
        #expect(first.description == "e220a839-7b1d-4daf-ae78-9e6aa1b965f4")
    }

    @Test func aSeededSourceIsSafeToShareBetweenTasks() async {
        let source = SeededIdentifierSource(seed: 7)
        let values = await withTaskGroup(of: [UUIDBytes].self) { group in
            for _ in 0..<4 { group.addTask { (0..<250).map { _ in source.next() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(values) == Set(sequence(SeededIdentifierSource(seed: 7), count: 1000)))
    }

    @Test func randomValuesAreDistinctVersion4() {
        let values = sequence(RandomIdentifierSource(), count: 1000)
        #expect(Set(values).count == values.count)
        #expect(values.allSatisfy(isVersion4))
        #expect(DeviceID(using: RandomIdentifierSource()) != DeviceID(using: RandomIdentifierSource()))
    }

    @Test func identitiesComeFromTheSource() {
        let expected = SeededIdentifierSource(seed: 3)
        let source = SeededIdentifierSource(seed: 3)
        #expect(DeviceID(using: source).uuid == expected.next())
        #expect(DocumentID(using: source).uuid == expected.next())
    }
}
