import FolioConflicts
import FolioCore
import FolioTestWorkPool
import Testing

/// Each strategy through the engine, on two devices that edited one base apart.
@Suite(.workPool) struct StrategyTests {
    /// The base, then the iPad's and the Mac's concurrent edits, delivered to an observer that does not settle.
    static func conflict(
        _ strategy: ConflictStrategy, iPad iPadOperations: [Notes.Operation], at iPadTime: Int64 = 20,
        mac macOperations: [Notes.Operation], at macTime: Int64 = 10
    ) -> (observer: Observer<Notes>, iPad: Change, mac: Change) {
        var iPad = Fixture.writer(Fixture.iPad)
        var mac = Fixture.writer(Fixture.mac)
        let base = Fixture.base(["apple", "pear"], writer: &iPad)
        let onIPad = iPad.edit(iPadOperations, of: Notes.self, on: [base[1]], at: iPadTime)
        let onMac = mac.edit(macOperations, of: Notes.self, on: [base[1]], at: macTime)
        var observer = Fixture.observer(strategy, settles: false)
        for change in base + [onIPad, onMac] { observer.deliver(change) }
        return (observer, onIPad, onMac)
    }

    static func action(_ observer: Observer<Notes>, hasResolver: Bool = false) -> ConflictAction<Notes>? {
        observer.engine.nextAction(
            hasResolver: hasResolver, in: observer.log, displayName: "Notes", devices: Fixture.devices)
    }

    @Test func nothingCompetesNothingToDo() {
        var iPad = Fixture.writer(Fixture.iPad)
        var observer = Fixture.observer(.latestWins, settles: false)
        for change in Fixture.base(["apple"], writer: &iPad) { observer.deliver(change) }
        #expect(observer.engine.state == .settled)
        #expect(Self.action(observer) == nil)
        #expect(Self.action(observer, hasResolver: true) == nil)
        #expect(observer.engine.settlement(with: Notes()) == nil)
    }

    @Test func currentVersionComesFirst() {
        let (observer, iPad, mac) = Self.conflict(.askUser, iPad: [.add("fig")], mac: [.add("kiwi")])
        // Same lamport: the Mac (the higher device) is the version every device shows.
        #expect(observer.engine.versions.map(\.head.hash) == [mac.hash, iPad.hash])
        #expect(observer.engine.state == .inConflict(versions: 2))
    }

    @Test func equalStatesAreOneVersion() {
        let (observer, _, _) = Self.conflict(.askUser, iPad: [.add("fig")], mac: [.add("fig")])
        #expect(observer.engine.versions.count == 1)
        #expect(observer.engine.versions[0].heads.count == 2)
        #expect(Self.action(observer) == nil)
    }

    @Test func latestWinsKeepsTheVersionWrittenLast() throws {
        // The iPad wrote last by wall time, though the Mac wins the lamport-then-device order shown.
        let (observer, iPad, mac) = Self.conflict(.latestWins, iPad: [.add("fig")], at: 50, mac: [.add("kiwi")], at: 10)
        guard case .settle(let settlement)? = Self.action(observer) else {
            Issue.record("no settlement")
            return
        }
        #expect(settlement.resolution == Resolution(strategy: .latestWins, chosen: [iPad.hash], discarded: [mac.hash]))
        #expect(settlement.state.words == ["apple", "fig", "pear"])
        #expect(Set(settlement.parents) == [iPad.hash, mac.hash])
        #expect(settlement.copies.isEmpty)

        var settled = observer
        settled.record(settlement)
        #expect(settled.engine.state == .settled)
        let ledger = settled.ledger
        #expect(ledger.count == 1)
        #expect(ledger.first?.strategy == .latestWins)
        #expect(ledger.first?.resolvedBy == Fixture.receiver)
        #expect(ledger.first?.discarded.map(\.head.hash) == [mac.hash])
        #expect(ledger.first?.discarded.first?.contents.words == ["apple", "kiwi", "pear"])
        #expect(ledger.first?.discarded.first?.device == Fixture.mac)
    }

    @Test func mergeRecordsTheMergedContents() {
        let (observer, iPad, mac) = Self.conflict(.merge, iPad: [.add("fig")], mac: [.remove("pear")])
        guard case .settle(let settlement)? = Self.action(observer) else {
            Issue.record("no settlement")
            return
        }
        #expect(settlement.resolution.strategy == .merge)
        #expect(settlement.resolution.chosen == [iPad.hash, mac.hash].sorted())
        #expect(settlement.resolution.discarded.isEmpty)
        #expect(settlement.resolution.contents == Notes(title: "t", words: ["apple", "fig"]).contents().encoded())
        #expect(settlement.state.words == ["apple", "fig"])

        var settled = observer
        settled.record(settlement)
        #expect(settled.state.words == ["apple", "fig"])
        #expect(settled.ledger.map(\.discarded.count) == [0])
    }

    @Test func mergeLeavesConflictingPartsToAPerson() {
        let (observer, _, _) = Self.conflict(.merge, iPad: [.title("iPad")], mac: [.title("Mac")])
        guard case .awaitUser(let unmerged?)? = Self.action(observer) else {
            Issue.record("expected an unmerged result")
            return
        }
        #expect(unmerged.conflicts.map(\.location) == ["title"])
        #expect(unmerged.conflicts.first?.base == "t")
        // The current version (the Mac's) is first.
        #expect(unmerged.merged.title == "Mac")
    }

    @Test func mergeOfVersionsThatDifferOnlyInSettlementKeepsTheLatest() {
        // Two devices merged the same edits apart, with different contents (say, a different merge rule): merging
        // the merges again would add nothing.
        var iPad = Fixture.writer(Fixture.iPad)
        var mac = Fixture.writer(Fixture.mac)
        var phone = Fixture.writer(Fixture.phone)
        let base = Fixture.base(["apple"], writer: &iPad)
        let a = iPad.edit([Notes.Operation.add("fig")], of: Notes.self, on: [base[1]], at: 10)
        let b = mac.edit([Notes.Operation.add("kiwi")], of: Notes.self, on: [base[1]], at: 11)
        let one = Resolution(
            strategy: .merge, chosen: [a.hash, b.hash], discarded: [],
            contents: Notes(title: "t", words: ["apple", "fig", "kiwi"]).contents().encoded())
        let two = Resolution(
            strategy: .merge, chosen: [a.hash, b.hash], discarded: [],
            contents: Notes(title: "t", words: ["apple", "kiwi"]).contents().encoded())
        let r1 = mac.make(.resolution(one), on: [a, b], at: 30)
        let r2 = phone.make(.resolution(two), on: [a, b], at: 40)
        var observer = Fixture.observer(.merge, settles: false)
        for change in base + [a, b, r1, r2] { observer.deliver(change) }
        #expect(observer.engine.versions.count == 2)
        #expect(observer.engine.differOnlyInSettlement(in: observer.log))
        guard case .settle(let settlement)? = Self.action(observer) else {
            Issue.record("no settlement")
            return
        }
        #expect(settlement.resolution == Resolution(strategy: .latestWins, chosen: [r2.hash], discarded: [r1.hash]))
    }

    @Test func keepBothCopiesEveryOtherVersion() {
        let (observer, iPad, mac) = Self.conflict(.keepBoth, iPad: [.add("fig")], mac: [.add("kiwi")])
        guard case .settle(let settlement)? = Self.action(observer) else {
            Issue.record("no settlement")
            return
        }
        // Same lamport: the Mac's version (the higher device) stays; the iPad's becomes a copy.
        #expect(settlement.resolution == Resolution(strategy: .keepBoth, chosen: [mac.hash], discarded: [iPad.hash]))
        #expect(settlement.copies.map(\.name) == ["Notes (conflict from iPad)"])
        #expect(settlement.copies.map(\.id) == [ConflictEngine<Notes>.copyIdentity(of: Fixture.document, origin: iPad)])
        #expect(settlement.copies.first?.contents.words == ["apple", "fig", "pear"])
        #expect(settlement.state.words == ["apple", "kiwi", "pear"])
    }

    @Test func keepBothNamesAnUnknownDevice() throws {
        let (observer, _, _) = Self.conflict(.keepBoth, iPad: [.add("fig")], mac: [.add("kiwi")])
        let settlement = try #require(
            observer.engine.settlementKeepingBoth(in: observer.log, displayName: "Notes", devices: [:]))
        #expect(settlement.copies.map(\.name) == ["Notes (conflict from another device)"])
    }

    @Test func customResolverOverridesThePolicy() {
        let (observer, iPad, mac) = Self.conflict(.latestWins, iPad: [.add("fig")], mac: [.add("kiwi")])
        guard case .askResolver? = Self.action(observer, hasResolver: true) else {
            Issue.record("expected askResolver")
            return
        }
        let mine = Notes(title: "mine", words: ["plum"])
        let settlement = observer.engine.settlement(with: mine)
        #expect(
            settlement?.resolution
                == Resolution(
                    strategy: .appMerge, chosen: [iPad.hash, mac.hash], discarded: [],
                    contents: mine.contents().encoded()))
        #expect(settlement?.state == mine)
    }

    @Test func askUserWaitsAndThenTakesTheChoice() {
        let (observer, iPad, mac) = Self.conflict(.askUser, iPad: [.add("fig")], mac: [.add("kiwi")])
        guard case .awaitUser(nil)? = Self.action(observer) else {
            Issue.record("expected awaitUser")
            return
        }
        #expect(!observer.engine.settlesWithoutUser(hasResolver: false))
        #expect(observer.engine.settlesWithoutUser(hasResolver: true))
        let settlement = observer.engine.settlement(choosing: .version(iPad.hash), in: observer.log)
        #expect(settlement?.resolution == Resolution(strategy: .userChoice, chosen: [iPad.hash], discarded: [mac.hash]))
        #expect(settlement?.state.words == ["apple", "fig", "pear"])
        // A hash that is no version's head chooses nothing.
        #expect(
            observer.engine.settlement(choosing: .version(observer.log.heads[0].parents[0]), in: observer.log) == nil)
    }

    @Test func conflictHistoryRebuildsASettledConflict() {
        let (observer, iPad, mac) = Self.conflict(.latestWins, iPad: [.add("fig")], at: 50, mac: [.add("kiwi")], at: 10)
        guard case .settle(let settlement)? = Self.action(observer) else {
            Issue.record("no settlement")
            return
        }
        var settled = observer
        settled.record(settlement)
        let records = ConflictEngine<Notes>.conflictHistory(
            settledBy: settled.log.resolutions, in: settled.log, devices: Fixture.devices)
        #expect(records.count == 1)
        #expect(records.first?.versions.map(\.head.hash) == [mac.hash, iPad.hash])
        #expect(records.first?.versions.first?.ancestor.words == ["apple", "pear"])
        #expect(records.first?.strategy == .latestWins)
        #expect(records.first?.discarded == [mac.hash])
        #expect(records.first?.resolvedBy == Fixture.receiver)
    }
}
