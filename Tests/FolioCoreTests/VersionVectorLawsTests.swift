import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

/// The algebra of version vectors, checked on random vectors over small device pools (so that equal, ordered and
/// concurrent pairs all occur often). Every failure message carries the seed; `FOLIO_SEED=<seed>` replays it.
@Suite(.workPool) struct VersionVectorLawsTests {
    static let iterations = 400

    /// Runs `body` on `iterations` samples, each with a pool of 3 to 5 devices.
    private func forEachSample(
        _ body: (inout PropertyCheck, inout SplitMix64, [DeviceID]) -> Void
    ) {
        let seed = TestSeed.make()
        var check = PropertyCheck(seed: seed)
        var generator = SplitMix64(seed: seed)
        for iteration in 0..<Self.iterations {
            check.iteration = iteration
            let pool = Array(TestDevices.pool.prefix(generator.int(in: 3...5)))
            body(&check, &generator, pool)
            if check.shouldStop { break }
        }
    }

    /// A random vector, built through one of the three ways code makes vectors (pairs, subscript, include), with
    /// small sequence numbers so that collisions are common.
    static func randomVector(_ generator: inout SplitMix64, pool: [DeviceID]) -> VersionVector {
        var vector: VersionVector
        switch generator.int(in: 0...2) {
        case 0:
            let pairs = pool.shuffled(using: &generator).map { ($0, UInt64(generator.int(in: 0...3))) }
            vector = VersionVector(pairs)
        case 1:
            vector = VersionVector()
            for _ in 0..<generator.int(in: 0...8) {
                vector[pool[generator.int(in: 0...(pool.count - 1))]] = UInt64(generator.int(in: 0...3))
            }
        default:
            vector = VersionVector()
            for _ in 0..<generator.int(in: 0...5) {
                vector.include(
                    ChangeID(
                        device: pool[generator.int(in: 0...(pool.count - 1))],
                        seq: UInt64(generator.int(in: 1...3))))
            }
        }
        vector.checkInvariants()
        return vector
    }

    /// The order defined entry by entry, the definition `compare(to:)` must agree with.
    static func pointwiseOrder(_ x: VersionVector, _ y: VersionVector, pool: [DeviceID]) -> CausalOrder {
        let lessOrEqual = pool.allSatisfy { x[$0] <= y[$0] }
        let greaterOrEqual = pool.allSatisfy { x[$0] >= y[$0] }
        switch (lessOrEqual, greaterOrEqual) {
        case (true, true): return .equal
        case (true, false): return .before
        case (false, true): return .after
        case (false, false): return .concurrent
        }
    }

    static func mirrored(_ order: CausalOrder) -> CausalOrder {
        switch order {
        case .before: .after
        case .after: .before
        case .equal, .concurrent: order
        }
    }

    @Test func compareMatchesThePointwiseDefinitionAndIsMirrored() {
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            let y = Self.randomVector(&generator, pool: pool)
            let order = x.compare(to: y)
            check.expect(
                order == Self.pointwiseOrder(x, y, pool: pool),
                "\(x) vs \(y): compare says \(order), pointwise \(Self.pointwiseOrder(x, y, pool: pool))")
            check.expect(
                y.compare(to: x) == Self.mirrored(order),
                "\(x) vs \(y) is \(order) but the reverse is \(y.compare(to: x))")
            check.expect((order == .equal) == (x == y), "\(x) vs \(y): compare \(order) disagrees with ==")
            check.expect(
                x.isContained(in: y) == (order == .equal || order == .before),
                "\(x) contained in \(y) is \(x.isContained(in: y)), order \(order)")
        }
    }

    @Test func containmentIsAPartialOrder() {
        var chains = 0
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            let y = Self.randomVector(&generator, pool: pool)
            let z = Self.randomVector(&generator, pool: pool)
            check.expect(x.compare(to: x) == .equal, "\(x) is not equal to itself")
            check.expect(x.isContained(in: x), "\(x) is not contained in itself")
            if x.isContained(in: y) && y.isContained(in: x) {
                check.expect(x == y, "\(x) ≤ \(y) and back, yet they differ")
            }
            if x.isContained(in: y) && y.isContained(in: z) {
                chains += 1
                check.expect(x.isContained(in: z), "\(x) ≤ \(y) ≤ \(z) but not \(x) ≤ \(z)")
            }
            // A chain built on purpose, so that transitivity is exercised on every iteration.
            let upper = x.merging(y)
            let top = upper.merging(z)
            check.expect(
                x.isContained(in: upper) && upper.isContained(in: top) && x.isContained(in: top),
                "chain \(x) ≤ \(upper) ≤ \(top) broken")
        }
        #expect(chains > 0, "random triples never formed a chain; the generator is too sparse")
    }

    @Test func mergeIsTheLeastUpperBound() {
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            let y = Self.randomVector(&generator, pool: pool)
            let z = Self.randomVector(&generator, pool: pool)
            let xy = x.merging(y)
            xy.checkInvariants()
            check.expect(
                pool.allSatisfy { xy[$0] == max(x[$0], y[$0]) }, "\(x) ∪ \(y) = \(xy) is not the pointwise max")
            check.expect(xy == y.merging(x), "merge not commutative: \(x), \(y)")
            let left = xy.merging(z)
            let right = x.merging(y.merging(z))
            left.checkInvariants()
            right.checkInvariants()
            check.expect(left == right, "merge not associative: \(x), \(y), \(z): \(left) vs \(right)")
            check.expect(x.merging(x) == x, "merge not idempotent on \(x)")
            check.expect(x.merging(VersionVector()) == x, "the empty vector is not neutral for \(x)")
            check.expect(x.isContained(in: xy) && y.isContained(in: xy), "\(xy) is not above \(x) and \(y)")
            if x.isContained(in: z) && y.isContained(in: z) {
                check.expect(xy.isContained(in: z), "\(z) is above \(x) and \(y) but not above their merge \(xy)")
            }
            var mutated = x
            mutated.merge(y)
            mutated.checkInvariants()
            check.expect(mutated == xy, "merge(_:) and merging(_:) differ on \(x), \(y)")
        }
    }

    @Test func intersectionIsTheGreatestLowerBound() {
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            let y = Self.randomVector(&generator, pool: pool)
            let z = Self.randomVector(&generator, pool: pool)
            let meet = x.intersecting(y)
            meet.checkInvariants()
            check.expect(
                pool.allSatisfy { meet[$0] == min(x[$0], y[$0]) }, "\(x) ∩ \(y) = \(meet) is not the pointwise min")
            check.expect(meet == y.intersecting(x), "intersection not commutative: \(x), \(y)")
            let left = meet.intersecting(z)
            let right = x.intersecting(y.intersecting(z))
            left.checkInvariants()
            right.checkInvariants()
            check.expect(left == right, "intersection not associative: \(x), \(y), \(z)")
            check.expect(x.intersecting(x) == x, "intersection not idempotent on \(x)")
            check.expect(x.intersecting(VersionVector()).isEmpty, "\(x) ∩ [] is not empty")
            check.expect(meet.isContained(in: x) && meet.isContained(in: y), "\(meet) is not below \(x) and \(y)")
            if z.isContained(in: x) && z.isContained(in: y) {
                check.expect(z.isContained(in: meet), "\(z) is below \(x) and \(y) but not below their meet \(meet)")
            }
            check.expect(x.merging(meet) == x, "absorption: \(x) ∪ (\(x) ∩ \(y)) ≠ \(x)")
            check.expect(x.intersecting(x.merging(y)) == x, "absorption: \(x) ∩ (\(x) ∪ \(y)) ≠ \(x)")
        }
    }

    @Test func containsAndIncludeAgree() {
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            let device = pool[generator.int(in: 0...(pool.count - 1))]
            let id = ChangeID(device: device, seq: UInt64(generator.int(in: 1...5)))
            check.expect(x.contains(id) == (x[device] >= id.seq), "\(x) contains \(id) is \(x.contains(id))")
            var grown = x
            grown.include(id)
            grown.checkInvariants()
            check.expect(grown.contains(id), "\(x) after including \(id) is \(grown), which lacks it")
            check.expect(
                (1...id.seq).allSatisfy { grown.contains(ChangeID(device: device, seq: $0)) },
                "\(grown) includes \(id) but not every earlier change of its device")
            check.expect(grown[device] == max(x[device], id.seq), "include(\(id)) on \(x) gave \(grown)")
            check.expect(
                pool.filter { $0 != device }.allSatisfy { grown[$0] == x[$0] },
                "include(\(id)) on \(x) changed another device: \(grown)")
            check.expect(x.isContained(in: grown), "including \(id) lost changes of \(x)")
            check.expect((grown == x) == x.contains(id), "include(\(id)) on \(x) changed it iff it was absent")
            var twice = grown
            twice.include(id)
            check.expect(twice == grown, "include(\(id)) is not idempotent")
        }
    }

    @Test func changesMissingAreExactlyWhatTheOtherSideLacks() {
        forEachSample { check, generator, pool in
            let mine = Self.randomVector(&generator, pool: pool)
            let theirs = Self.randomVector(&generator, pool: pool)
            let missing = mine.changesMissing(from: theirs)
            check.expect(
                zip(missing, missing.dropFirst()).allSatisfy { $0.device < $1.device },
                "ranges of \(mine) missing from \(theirs) are not in device order")
            for range in missing {
                check.expect(
                    range.seqs.lowerBound == theirs[range.device] + 1 && range.seqs.upperBound == mine[range.device],
                    "range \(range.seqs) for \(range.device) of \(mine) missing from \(theirs)")
            }
            // Exactly the changes mine names and theirs lacks, no more and no fewer.
            let sent = Set(missing.flatMap { range in range.seqs.map { ChangeID(device: range.device, seq: $0) } })
            let lacking = Set(
                pool.flatMap { device in
                    (1...4).map { ChangeID(device: device, seq: $0) }.filter {
                        mine.contains($0) && !theirs.contains($0)
                    }
                })
            check.expect(
                sent == lacking, "\(mine) missing from \(theirs): sent \(sent.sorted()) but lacking \(lacking.sorted())"
            )
            // Sending them brings the other side up to the union.
            var caughtUp = theirs
            for range in missing { caughtUp.include(ChangeID(device: range.device, seq: range.seqs.upperBound)) }
            caughtUp.checkInvariants()
            check.expect(caughtUp == mine.merging(theirs), "\(theirs) plus \(missing) is \(caughtUp), not the union")
            let asVector = VersionVector(missing.map { ($0.device, $0.seqs.upperBound) })
            asVector.checkInvariants()
            check.expect(
                theirs.merging(asVector) == mine.merging(theirs),
                "\(theirs) ∪ \(asVector) ≠ \(mine) ∪ \(theirs)")
            check.expect(
                missing.isEmpty == mine.isContained(in: theirs),
                "\(mine) missing from \(theirs) is \(missing.isEmpty ? "empty" : "not empty")")
            let count = missing.reduce(UInt64(0)) { $0 + UInt64($1.seqs.count) }
            check.expect(
                count == mine.merging(theirs).changeCount - theirs.changeCount,
                "\(count) changes sent, but the union has \(mine.merging(theirs).changeCount - theirs.changeCount) more"
            )
        }
    }

    @Test func entriesRoundTripAndEqualityIsStructural() {
        forEachSample { check, generator, pool in
            let x = Self.randomVector(&generator, pool: pool)
            check.expect(VersionVector(sortedEntries: x.entries) == x, "\(x) does not survive its own entries")
            let shuffled = x.entries.shuffled(using: &generator).map { ($0.device, $0.seq) }
            let rebuilt = VersionVector(shuffled)
            check.expect(
                rebuilt == x && rebuilt.hashValue == x.hashValue, "\(x) rebuilt from shuffled pairs is \(rebuilt)")
            check.expect(x.devices == x.devices.sorted(), "\(x) devices not sorted")
            check.expect(x.changeCount == pool.reduce(0) { $0 + x[$1] }, "\(x) change count \(x.changeCount)")
            check.expect(x.entries.allSatisfy { $0.seq > 0 }, "\(x) has a zero entry")
        }
    }
}
