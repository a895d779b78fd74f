import FolioConflicts
import FolioCore
import FolioTestWorkPool
import FolioTesting
import Testing

/// Every delivery order of small multi-device histories reaches the same versions, settlements and ledger.
@Suite(.workPool) struct DeliveryOrderTests {
    /// Three devices edit one base apart (the Mac twice, renaming in between); the changes after the base, in
    /// causal order.
    static func history() -> (base: [Change], concurrent: [Change]) {
        var iPad = Fixture.writer(Fixture.iPad)
        var mac = Fixture.writer(Fixture.mac)
        var phone = Fixture.writer(Fixture.phone)
        let base = Fixture.base(["apple", "pear"], writer: &iPad)
        let a = iPad.edit([Notes.Operation.add("fig")], of: Notes.self, on: [base[1]], at: 30)
        let b1 = mac.edit([Notes.Operation.remove("pear")], of: Notes.self, on: [base[1]], at: 10)
        let b2 = mac.make(.lifecycle(.rename(to: "Notes 2")), on: [b1], at: 40)
        let c = phone.edit([Notes.Operation.add("kiwi")], of: Notes.self, on: [base[1]], at: 20)
        return (base, [a, b1, b2, c])
    }

    /// What an engine says, in comparable values.
    struct Summary: Hashable, CustomStringConvertible {
        var versions: [[ChangeHash]]
        var states: [Notes]
        var state: ConflictState

        init(_ engine: ConflictEngine<Notes>) {
            versions = engine.versions.map { $0.heads.map(\.hash) }
            states = engine.versions.map(\.state)
            state = engine.state
        }

        var description: String { "\(state) \(states.map { $0.words })" }
    }

    /// A settlement in comparable values.
    struct Decision: Hashable {
        var resolution: Resolution
        var parents: [ChangeHash]
        var state: Notes
        var copies: [DocumentID]

        init?(_ action: ConflictAction<Notes>?) {
            guard case .settle(let settlement)? = action else { return nil }
            resolution = settlement.resolution
            parents = settlement.parents
            state = settlement.state
            copies = settlement.copies.map(\.id)
        }
    }

    @Test(arguments: [ConflictStrategy.askUser, .latestWins, .merge, .keepBoth])
    func everyOrderSeesTheSameVersionsAndDecidesAlike(_ strategy: ConflictStrategy) {
        let (base, concurrent) = Self.history()
        var summaries: Set<Summary> = []
        var decisions: Set<Decision?> = []
        let orders = permutations(concurrent)
        #expect(orders.count == 24)
        for order in orders {
            var observer = Fixture.observer(strategy, settles: false)
            for change in base + order { observer.deliver(change) }
            summaries.insert(Summary(observer.engine))
            decisions.insert(
                Decision(
                    observer.engine.nextAction(
                        hasResolver: false, in: observer.log, displayName: "Notes", devices: Fixture.devices)))
        }
        #expect(summaries.count == 1, "orders disagree: \(summaries)")
        #expect(summaries.first?.state == .inConflict(versions: 3))
        #expect(decisions.count == 1)
        if strategy == .askUser {
            #expect(decisions.first == .some(nil))
        } else {
            #expect(decisions.first != .some(nil))
        }
    }

    @Test(arguments: [ConflictStrategy.latestWins, .merge, .keepBoth])
    func everyOrderSettlingAsItGoesEndsAlike(_ strategy: ConflictStrategy) {
        let (base, concurrent) = Self.history()
        var finals: Set<Notes> = []
        var lost: Set<[Notes]> = []
        var copies: Set<[DocumentID]> = []
        for order in permutations(concurrent) {
            var observer = Fixture.observer(strategy)
            for change in base + order { observer.deliver(change) }
            #expect(!observer.engine.isInConflict)
            finals.insert(observer.state)
            lost.insert(
                observer.ledger.flatMap { $0.discarded.map(\.contents) }.sorted {
                    $0.words.lexicographicallyPrecedes($1.words)
                })
            copies.insert(observer.copies.map(\.id).sorted())
        }
        #expect(finals.count == 1, "final states differ: \(finals.map(\.words))")
        #expect(lost.count == 1, "ledgers differ: \(lost)")
        #expect(copies.count == 1, "copies differ: \(copies)")
        switch strategy {
        case .latestWins:
            // The iPad's edit was made last by wall time (the Mac's rename does not make its edit newer).
            #expect(finals.first?.words == ["apple", "fig", "pear"])
            #expect(
                lost.first?.map(\.words).sorted { $0.lexicographicallyPrecedes($1) } == [
                    ["apple"], ["apple", "kiwi", "pear"],
                ])
        case .merge:
            #expect(finals.first?.words == ["apple", "fig", "kiwi"])
            #expect(lost.first == [])
        case .keepBoth:
            #expect(copies.first?.count == 2)
            #expect(lost.first?.count == 2)
        case .askUser:
            break
        }
    }

    /// Random small histories: every device edits from what it has seen; every order of the changes after the base
    /// (up to 120, or a seeded sample) leads an observer that only watches to the same versions and decision.
    @Test func randomHistoriesConvergeInEveryOrder() {
        let seed = TestSeed.make()
        var random = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        let words = ["a", "b", "c", "d", "e"]
        for iteration in 0..<12 where !check.shouldStop {
            check.iteration = iteration
            var writers = [Fixture.iPad, Fixture.mac, Fixture.phone].map(Fixture.writer)
            let base = Fixture.base(["a", "b"], writer: &writers[0])
            var seen: [[Change]] = Array(repeating: [base[1]], count: 3)
            var made: [Change] = []
            for step in 0..<random.int(in: 3...5) {
                let author = random.int(in: 0...2)
                // Sometimes an author first hears of another's change, and edits on both.
                if random.chance(1, in: 3), let other = made.filter({ $0.id.device != writers[author].device.id }).last,
                    !seen[author].contains(where: { $0.vector.contains(other.id) })
                {
                    seen[author] = [other] + seen[author].filter { !other.vector.contains($0.id) }
                }
                let operation: Notes.Operation =
                    random.chance(1, in: 2) ? .add(random.pick(words)) : .remove(random.pick(words))
                let change = writers[author].edit(
                    [operation], of: Notes.self, on: seen[author], at: Int64(100 + random.int(in: 0...50) + step))
                seen[author] = [change]
                made.append(change)
            }
            var orders = permutations(made)
            if orders.count > 120 { orders = (0..<120).map { _ in orders[random.int(in: 0...(orders.count - 1))] } }
            for strategy in [ConflictStrategy.askUser, .latestWins, .merge, .keepBoth] {
                var summaries: Set<Summary> = []
                var decisions: Set<Decision?> = []
                for order in orders {
                    var observer = Fixture.observer(strategy, settles: false)
                    for change in base + order { observer.deliver(change) }
                    summaries.insert(Summary(observer.engine))
                    decisions.insert(
                        Decision(
                            observer.engine.nextAction(
                                hasResolver: false, in: observer.log, displayName: "Notes", devices: Fixture.devices))
                    )
                }
                check.expect(summaries.count == 1, "\(strategy): versions differ by order: \(summaries)")
                check.expect(decisions.count == 1, "\(strategy): decisions differ by order")
            }
        }
    }
}
