import FolioCore
import FolioMerge
import FolioTestWorkPool
import FolioTesting
import Testing

/// `TextEventGraph` against a plain list CRDT (`ReferenceListCRDT`) on random concurrent histories.
@Suite(.workPool) struct TextEventGraphPropertyTests {
    /// Random histories of 2 to 5 devices from a random base text (runs inserted and deleted at random places, and
    /// often at one place at once; now and then a choice that keeps one of the versions a device holds): the graph
    /// gives the reference's text in the order the events were made, in many other orders that put parents first,
    /// and at every device's own version.
    @Test(arguments: 2...5) func everyOrderGivesTheReferenceText(devices: Int) {
        let seed = TestSeed.make() &+ UInt64(devices)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<150 {
            check.iteration = iteration
            let history = RandomTextHistory(devices: devices, events: 6 + iteration % 30, using: &generator)
            let expected = history.reference.text
            check.expect(
                replay(history, order: Array(history.events.indices)) == expected,
                "made in order: expected \(expected.debugDescription)")
            for _ in 0..<12 {
                let order = history.randomTopologicalOrder(using: &generator)
                let text = replay(history, order: order)
                check.expect(
                    text == expected, "order \(order): \(text.debugDescription) ≠ \(expected.debugDescription)")
            }
            for device in 0..<devices {
                let known = history.reference.past(of: history.frontier(of: device))
                let order = history.randomTopologicalOrder(using: &generator).filter(known.contains)
                let wanted = history.reference.text(atVersionOf: history.frontier(of: device))
                let text = replay(history, order: order)
                check.expect(text == wanted, "device \(device) at its version: \(text.debugDescription)")
            }
            if check.shouldStop { return }
        }
    }

    /// A long base text edited at many places by three devices: the edits take base scalars out of their
    /// placeholder runs all over the list, whose blocks fill and split; the text stays the reference's.
    @Test func aLongBaseEditedAtManyPlacesGivesTheReferenceText() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<3 {
            check.iteration = iteration
            let history = RandomTextHistory(devices: 3, events: 150, baseLength: 3_000, using: &generator)
            let expected = history.reference.text
            check.expect(replay(history, order: Array(history.events.indices)) == expected, "made in order")
            let order = history.randomTopologicalOrder(using: &generator)
            check.expect(replay(history, order: order) == expected, "in order \(order)")
            if check.shouldStop { return }
        }
    }

    /// Events that type on from where the previous edit ended, delete the scalar just typed, and delete forward at
    /// one place again and again (the edits a replay finds without a search): the text is the reference's, as two or
    /// three devices do so apart from a base text.
    @Test func typingOnAndDeletingOnGiveTheReferenceText() {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        let alphabet = Array("abcxyz \n".unicodeScalars)
        for iteration in 0..<60 {
            check.iteration = iteration
            let base = String(repeating: "base text\n", count: 1 + Int(generator.next() % 20))
            var reference = ReferenceListCRDT(base: base)
            var graph = TextEventGraph<Int>(base: Array(base.unicodeScalars))
            let devices = 2 + Int(generator.next() % 2)
            var last: [Int?] = Array(repeating: nil, count: devices)
            for _ in 0..<(2 + Int(generator.next() % 6)) {
                let device = Int(generator.next() % UInt64(devices))
                let parents = last[device].map { [$0] } ?? []
                var length = reference.text(atVersionOf: parents).unicodeScalars.count
                var cursor = Int(generator.next() % UInt64(length + 1))
                var edits: [TextEdit] = []
                for _ in 0..<(1 + Int(generator.next() % 40)) {
                    switch generator.next() % 6 {
                    case 0 where cursor > 0:
                        // Backspace.
                        edits.append(.delete(at: cursor - 1, count: 1))
                        cursor -= 1
                        length -= 1
                    case 1 where cursor < length:
                        // Delete forward, the cursor staying.
                        edits.append(.delete(at: cursor, count: 1))
                        length -= 1
                    default:
                        let typed = (0..<(1 + Int(generator.next() % 2))).map { _ in
                            alphabet[Int(generator.next() % UInt64(alphabet.count))]
                        }
                        edits.append(.insert(at: cursor, scalars: typed))
                        cursor += typed.count
                        length += typed.count
                    }
                }
                let event = reference.add(agent: device, parents: parents, edits: edits)
                let added = try! graph.add(agent: device, parents: parents, edits: edits)
                check.expect(added == event, "events numbered apart")
                last[device] = event
            }
            graph.checkInvariants()
            check.expect(
                graph.text == reference.text, "\(graph.text.debugDescription) ≠ \(reference.text.debugDescription)")
            if check.shouldStop { return }
        }
    }

    /// Two events' versions, taken at random from random histories, merge as the definition of an overlap says
    /// (`ReferenceListCRDT.merge(of:and:)`): the same overlapping stretches, at the same places, and the same text,
    /// whatever else the graph holds. Histories that delete at one place from two devices overlap often.
    @Test(arguments: 2...4) func twoVersionsOverlapAsDefined(devices: Int) {
        let seed = TestSeed.make() &+ UInt64(devices)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        var overlapping = 0
        var clean = 0
        for iteration in 0..<120 {
            check.iteration = iteration
            let history = RandomTextHistory(devices: devices, events: 6 + iteration % 30, using: &generator)
            var (graph, position) = self.graph(history, order: history.randomTopologicalOrder(using: &generator))
            for _ in 0..<8 {
                let first = Int(generator.next() % UInt64(history.events.count))
                let second = Int(generator.next() % UInt64(history.events.count))
                let expected = history.reference.merge(of: first, and: second)
                let found = try! graph.merge(of: [position[first]!, position[second]!])
                check.expect(found == expected, "events \(first) and \(second): \(found) ≠ \(expected)")
                if expected.isClean { clean += 1 } else { overlapping += 1 }
            }
            graph.checkInvariants()
            if check.shouldStop { return }
        }
        check.expect(overlapping > 0 && clean > 0, "\(overlapping) overlapping merges, \(clean) clean")
    }

    /// The text of a version read from a graph that holds every event (`TextEventGraph.text(at:)`) is the
    /// reference's text at that version, for one event's version or two events' merged, whatever order the graph
    /// took the events in; reading it leaves the graph as it was, so the events added after it give the
    /// reference's text too.
    @Test(arguments: 2...4) func aVersionsTextIsTheReferencesAtThatVersion(devices: Int) {
        let seed = TestSeed.make() &+ UInt64(devices)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<150 {
            check.iteration = iteration
            let history = RandomTextHistory(devices: devices, events: 4 + iteration % 30, using: &generator)
            let order = history.randomTopologicalOrder(using: &generator)
            // Half the events first, the versions read, then the rest: what is read must not disturb the replay.
            let split = order.count / 2
            var (graph, position) = self.graph(history, order: Array(order[..<split]))
            for round in 0..<6 {
                let added = Array(order[..<(round < 3 ? split : order.count)])
                if round == 3 {
                    (graph, position) = self.extended(graph, position, history, order: Array(order[split...]))
                }
                guard !added.isEmpty else { continue }
                let versions = (0..<(1 + Int(generator.next() % 2))).map { _ in
                    added[Int(generator.next() % UInt64(added.count))]
                }
                let expected = history.reference.text(atVersionOf: versions)
                let found = try! graph.text(at: versions.map { position[$0]! })
                check.expect(
                    found == expected, "events \(versions): \(found.debugDescription) ≠ \(expected.debugDescription)")
            }
            graph.checkInvariants()
            check.expect(
                graph.text == history.reference.text, "the graph after the reads: \(graph.text.debugDescription)")
            if check.shouldStop { return }
        }
    }

    /// Taking back a random set of events (one device's, or a few at random) from a random history
    /// (`TextEventGraph.reversal(of:)`), the edits applied to the merged text give the reference's text without
    /// what those events did: their scalars gone, the scalars only they deleted back, everything else as it was,
    /// in whatever order the graph took the events.
    @Test(arguments: 2...4) func aReversalTakesBackWhatTheEventsDid(devices: Int) {
        let seed = TestSeed.make() &+ UInt64(devices)
        var generator = SplitMix64(seed: seed)
        var check = PropertyCheck(seed: seed)
        for iteration in 0..<150 {
            check.iteration = iteration
            let history = RandomTextHistory(devices: devices, events: 4 + iteration % 30, using: &generator)
            let (graph, position) = self.graph(history, order: history.randomTopologicalOrder(using: &generator))
            for round in 0..<4 {
                let reversed: Set<Int>
                if round == 0 {
                    let device = Int(generator.next() % UInt64(devices))
                    reversed = Set(history.events.indices.filter { history.events[$0].agent == device })
                } else {
                    reversed = Set(history.events.indices.filter { _ in generator.next() % 3 == 0 })
                }
                let edits = try! graph.reversal(of: reversed.sorted().map { position[$0]! })
                var text = Array(graph.text.unicodeScalars)
                for edit in edits {
                    switch edit {
                    case .insert(let at, let scalars): text.insert(contentsOf: scalars, at: at)
                    case .delete(let at, let count): text.removeSubrange(at..<(at + count))
                    case .append, .replaceAll: check.expect(false, "a reversal makes only inserts and deletes")
                    }
                }
                let expected = history.reference.text(reversing: reversed)
                let found = String(String.UnicodeScalarView(text))
                check.expect(
                    found == expected,
                    "reversing \(reversed.sorted()): \(found.debugDescription) ≠ \(expected.debugDescription)")
            }
            if check.shouldStop { return }
        }
    }

    /// The events of `order` (indexes into the history's events, parents first) added to a graph in that order:
    /// its text.
    private func replay(_ history: RandomTextHistory, order: [Int]) -> String {
        let (graph, _) = self.graph(history, order: order)
        graph.checkInvariants()
        return graph.text
    }

    /// The events of `order` added to a graph in that order, and each event's index in the graph.
    private func graph(_ history: RandomTextHistory, order: [Int]) -> (TextEventGraph<Int>, [Int: Int]) {
        extended(TextEventGraph<Int>(base: Array(history.base.unicodeScalars)), [:], history, order: order)
    }

    /// `graph`, whose events are `history`'s at `position`, with the events of `order` added.
    private func extended(
        _ graph: TextEventGraph<Int>, _ position: [Int: Int], _ history: RandomTextHistory, order: [Int]
    ) -> (TextEventGraph<Int>, [Int: Int]) {
        var graph = graph
        var position = position
        for index in order {
            let event = history.events[index]
            if let kept = event.kept {
                position[index] = try! graph.add(
                    agent: event.agent, parents: event.parents.map { position[$0]! },
                    keeping: kept.map { position[$0]! })
            } else {
                position[index] = try! graph.add(
                    agent: event.agent, parents: event.parents.map { position[$0]! }, edits: event.edits)
            }
        }
        return (graph, position)
    }
}

/// A random concurrent history: devices that make edits on what they know, and now and then learn what another
/// device knows. The reference CRDT records it as it is made, and gives each edit the text it is made on.
struct RandomTextHistory {
    struct Event {
        var agent: Int
        var parents: [Int]
        var edits: [TextEdit]
        /// For a choice among versions: the versions it keeps (its text is theirs).
        var kept: [Int]? = nil
    }

    private(set) var events: [Event] = []
    /// The text every event starts from: empty, or a few words the edits then split.
    let base: String
    private(set) var reference: ReferenceListCRDT
    private var known: [Set<Int>]

    /// A history of `count` events; the base has `baseLength` scalars, or a random few when `nil`.
    init(devices: Int, events count: Int, baseLength: Int? = nil, using generator: inout SplitMix64) {
        known = Array(repeating: [], count: devices)
        let alphabet = Array("abcdefxyz \n".unicodeScalars)
        let baseLength = baseLength ?? (generator.next() % 3 == 0 ? 0 : Int(generator.next() % 40))
        base = String(
            String.UnicodeScalarView(
                (0..<baseLength).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }))
        reference = ReferenceListCRDT(base: base)
        for _ in 0..<count {
            let device = Int(generator.next() % UInt64(devices))
            if generator.next() % 3 == 0 {
                let other = Int(generator.next() % UInt64(devices))
                known[device].formUnion(known[other])
            }
            let parents = frontier(of: device)
            if parents.count > 1, generator.next() % 4 == 0 {
                // A choice among the versions the device holds: one of them kept, the others discarded.
                let kept = [parents[Int(generator.next() % UInt64(parents.count))]]
                let event = reference.add(agent: device, parents: parents, keeping: kept)
                events.append(Event(agent: device, parents: parents, edits: [], kept: kept))
                known[device].insert(event)
                continue
            }
            var length = reference.text(atVersionOf: parents).unicodeScalars.count
            var edits: [TextEdit] = []
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                // One place in three is the start or the end, where devices meet most.
                let roll = generator.next() % 6
                let position =
                    roll == 0 ? 0 : roll == 1 ? length : Int(generator.next() % UInt64(length + 1))
                if length > 0, generator.next() % 3 == 0 {
                    let start = min(position, length - 1)
                    let deleted = 1 + Int(generator.next() % UInt64(min(4, length - start)))
                    edits.append(.delete(at: start, count: deleted))
                    length -= deleted
                } else if generator.next() % 10 == 0 {
                    let kept = reference.text(atVersionOf: parents).unicodeScalars.prefix(length / 2)
                    let scalars = Array(kept) + [alphabet[Int(generator.next() % UInt64(alphabet.count))]]
                    edits = [.replaceAll(with: scalars)]
                    length = scalars.count
                    break
                } else {
                    let run = (0..<(1 + Int(generator.next() % 4))).map { _ in
                        alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    }
                    edits.append(
                        generator.next() % 8 == 0 ? .append(scalars: run) : .insert(at: position, scalars: run))
                    length += run.count
                }
            }
            let event = reference.add(agent: device, parents: parents, edits: edits)
            events.append(Event(agent: device, parents: parents, edits: edits))
            known[device].insert(event)
        }
    }

    /// The latest events `device` knows: those no other event it knows descends from.
    func frontier(of device: Int) -> [Int] {
        let events = known[device]
        var below = Set<Int>()
        for event in events { below.formUnion(reference.past(of: [event]).subtracting([event])) }
        return events.subtracting(below).sorted()
    }

    /// The events in a random order that puts every event after its parents.
    func randomTopologicalOrder(using generator: inout SplitMix64) -> [Int] {
        var placed = Set<Int>()
        var order: [Int] = []
        while order.count < events.count {
            let ready = events.indices.filter { !placed.contains($0) && events[$0].parents.allSatisfy(placed.contains) }
            let pick = ready[Int(generator.next() % UInt64(ready.count))]
            placed.insert(pick)
            order.append(pick)
        }
        return order
    }
}
