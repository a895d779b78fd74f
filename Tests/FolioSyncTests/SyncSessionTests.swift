import FolioCore
import FolioSync
import FolioTestDoubles
import FolioTestWorkPool
import Testing

/// The session without a store or a network: every delivery order of a small exchange, replayed in a plain loop.
@Suite(.workPool) struct SyncSessionTests {
    static let a = Device.named("A"), b = Device.named("B")

    /// A has a1, a2, a3 of the first document and a note in the third; B has a1, b1 (concurrent with a2 and a3)
    /// and a note in the second.
    static func histories() -> (a: ModelStore, b: ModelStore, all: ModelStore) {
        var first = ChangeMaker(document: Fixtures.document)
        let a1 = first.make(a, "a1")
        let a2 = first.make(a, on: [a1], "a2")
        let a3 = first.make(a, on: [a2], "a3")
        let b1 = first.make(b, on: [a1], "b1")
        var second = ChangeMaker(document: Fixtures.otherDocument)
        let note = second.make(b, "b's note")
        var third = ChangeMaker(document: Fixtures.thirdDocument)
        let other = third.make(a, "a's note")
        return (
            ModelStore([a1, a2, a3, other]), ModelStore([a1, b1, note]), ModelStore([a1, a2, a3, b1, note, other])
        )
    }

    /// Both sides of an exchange and the messages on their way, as one value.
    struct World: Hashable {
        var sessions: [SyncSession]
        var stores: [ModelStore]
        /// Messages on their way to side 0 (the initiator) or 1, kept sorted: the network is a multiset.
        var inFlight: [Envelope] = []
        var faultsLeft: Int
        var ticksLeft: Int

        struct Envelope: Hashable, Comparable {
            var to: Int
            var bytes: [UInt8]
            static func < (lhs: Envelope, rhs: Envelope) -> Bool {
                (lhs.to, lhs.bytes.count) < (rhs.to, rhs.bytes.count)
                    || ((lhs.to, lhs.bytes.count) == (rhs.to, rhs.bytes.count)
                        && lhs.bytes.lexicographicallyPrecedes(rhs.bytes))
            }
        }

        /// Performs a side's actions the way ``SyncDriver`` does, against the model stores.
        mutating func perform(_ side: Int, _ actions: [SyncAction]) {
            var queue = actions[...]
            while let action = queue.popFirst() {
                switch action {
                case .send(let message):
                    inFlight.append(Envelope(to: 1 - side, bytes: message.encoded()))
                case .fetch(let document, let since):
                    queue.append(
                        contentsOf: sessions[side].fetched(
                            stores[side].changes(of: document, since: since), heads: [], of: document))
                case .ingest(let document, let changes, _):
                    stores[side].ingest(changes)
                    queue.append(
                        contentsOf: sessions[side].ingested(document, vector: stores[side].vector(of: document)))
                case .verify(let document, let heads):
                    let log = Set(stores[side].log(of: document))
                    precondition(
                        heads.allSatisfy(log.contains), "side \(side) lacks a head of \(document) its vector covers")
                }
            }
            inFlight.sort()
        }

        mutating func deliver(_ index: Int, keepingACopy: Bool = false) throws {
            let envelope = keepingACopy ? inFlight[index] : inFlight.remove(at: index)
            perform(envelope.to, sessions[envelope.to].receive(try SyncMessage(decoding: envelope.bytes)))
        }

        mutating func tick() {
            ticksLeft -= 1
            perform(0, sessions[0].tick())
            perform(1, sessions[1].tick())
        }
    }

    struct Search {
        var visited: Set<World> = []
        var finished = 0
        var stuck = 0
        var failures: [String] = []

        /// Explores every way the exchange can go from `world`: any message delivered next, and, while faults are
        /// left, any message lost or delivered twice; a timeout when nothing is on its way.
        mutating func explore(_ world: World, expected: ModelStore) throws {
            guard visited.insert(world).inserted, failures.count < 3 else { return }
            if world.sessions[0].isFinished {
                finished += 1
                for side in 0...1 {
                    for document in expected.documents
                    where world.stores[side].log(of: document) != expected.log(of: document) {
                        failures.append(
                            "side \(side) finished without converging on \(document): \(world.stores[side].vector(of: document))"
                        )
                    }
                    if world.stores[side].pendingCount != 0 {
                        failures.append("side \(side) finished with pending changes")
                    }
                }
                return
            }
            if world.inFlight.isEmpty {
                guard world.ticksLeft > 0 else {
                    stuck += 1
                    if world.faultsLeft > 0 {
                        failures.append("the exchange stalled without a fault: \(world.sessions)")
                    }
                    return
                }
                var next = world
                next.tick()
                try explore(next, expected: expected)
                return
            }
            for index in world.inFlight.indices where index == 0 || world.inFlight[index] != world.inFlight[index - 1] {
                var next = world
                try next.deliver(index)
                try explore(next, expected: expected)
                guard world.faultsLeft > 0 else { continue }
                var lost = world
                lost.inFlight.remove(at: index)
                lost.faultsLeft -= 1
                try explore(lost, expected: expected)
                var twice = world
                try twice.deliver(index, keepingACopy: true)
                twice.faultsLeft -= 1
                try explore(twice, expected: expected)
            }
        }
    }

    static func start(faults: Int, ticks: Int, limits: SyncSession.Limits = SyncSession.Limits()) -> (World, ModelStore)
    {
        let (storeA, storeB, all) = histories()
        var world = World(
            sessions: [
                SyncSession(
                    device: a, id: 11, role: .initiator, vectors: storeA.vectors, heads: storeA.heads, limits: limits),
                SyncSession(
                    device: b, id: 22, role: .responder, vectors: storeB.vectors, heads: storeB.heads, limits: limits),
            ],
            stores: [storeA, storeB], faultsLeft: faults, ticksLeft: ticks)
        world.perform(0, world.sessions[0].start())
        world.perform(1, world.sessions[1].start())
        return (world, all)
    }

    @Test(arguments: [512, 1]) func everyDeliveryOrderConverges(changesPerMessage: Int) throws {
        let (world, expected) = Self.start(
            faults: 0, ticks: 0, limits: SyncSession.Limits(changesPerMessage: changesPerMessage))
        var search = Search()
        try search.explore(world, expected: expected)
        #expect(search.failures.isEmpty, "\(search.failures)")
        #expect(search.stuck == 0)
        #expect(search.finished > 1)
        print(
            "every delivery order, \(changesPerMessage) changes per message: \(search.visited.count) states, \(search.finished) finished"
        )
    }

    @Test func everyDeliveryOrderWithOneMessageLostOrDuplicatedConverges() throws {
        // One change per message, so that the changes of a document travel in several messages.
        let (world, expected) = Self.start(faults: 1, ticks: 3, limits: SyncSession.Limits(changesPerMessage: 1))
        var search = Search()
        try search.explore(world, expected: expected)
        #expect(search.failures.isEmpty, "\(search.failures)")
        #expect(search.stuck == 0, "exchanges that ran out of timeouts")
        print("one fault: \(search.visited.count) states, \(search.finished) finished")
    }

    @Test(arguments: [512, 1]) func everyDeliveryOrderConvergesWithARequestWindowOfOne(changesPerMessage: Int) throws {
        let (world, expected) = Self.start(
            faults: 0, ticks: 0,
            limits: SyncSession.Limits(changesPerMessage: changesPerMessage, requestWindow: 1))
        var search = Search()
        try search.explore(world, expected: expected)
        #expect(search.failures.isEmpty, "\(search.failures)")
        #expect(search.stuck == 0)
        #expect(search.finished > 1)
    }

    @Test func everyDeliveryOrderWithOneMessageLostOrDuplicatedConvergesWithARequestWindowOfOne() throws {
        let (world, expected) = Self.start(
            faults: 1, ticks: 3, limits: SyncSession.Limits(changesPerMessage: 1, requestWindow: 1))
        var search = Search()
        try search.explore(world, expected: expected)
        #expect(search.failures.isEmpty, "\(search.failures)")
        #expect(search.stuck == 0, "exchanges that ran out of timeouts")
    }

    /// With a window, a hello announcing many documents costs a few requests at a time: the next goes once one is
    /// complete, and a `done` or a timeout repeats only those in the window, a `done` only when nothing arrived since
    /// the last.
    @Test func aRequestWindowAsksForAFewDocumentsAtATime() {
        let documents = (0..<5).map { DocumentID(UUIDBytes(bytes: Array(repeating: UInt8($0), count: 16))) }
        let announced = Dictionary(
            uniqueKeysWithValues: documents.map { ($0, VersionVector([(Self.a.id, UInt64(1))])) })
        var session = SyncSession(
            device: Self.b, id: 2, role: .responder, vectors: [:], limits: SyncSession.Limits(requestWindow: 2))
        func requested(_ actions: [SyncAction]) -> [DocumentID] {
            actions.compactMap { if case .send(.request(let document, _)) = $0 { document } else { nil } }
        }
        let opening = session.receive(.hello(SyncHello(device: Self.a, session: 1, vectors: announced)))
        #expect(requested(opening) == Array(documents[0..<2]))
        #expect(requested(session.receive(.done(from: 1, to: 2))) == Array(documents[0..<2]))
        #expect(requested(session.ingested(documents[1], vector: announced[documents[1]]!)) == [documents[2]])
        // Something arrived since the last `done`: the replies are on their way, nothing is asked again.
        #expect(requested(session.receive(.done(from: 1, to: 2))).isEmpty)
        #expect(requested(session.tick()) == [documents[0], documents[2]])
        for document in documents where document != documents[1] {
            _ = session.ingested(document, vector: announced[document]!)
        }
        #expect(session.isComplete)
        #expect(requested(session.receive(.done(from: 1, to: 2))).isEmpty)
    }

    @Test func aPeerThatIsUpToDateExchangesOnlyHellosAndDones() {
        let (storeA, _, _) = Self.histories()
        var world = World(
            sessions: [
                SyncSession(device: Self.a, id: 1, role: .initiator, vectors: storeA.vectors),
                SyncSession(device: Self.b, id: 2, role: .responder, vectors: storeA.vectors),
            ],
            stores: [storeA, storeA], faultsLeft: 0, ticksLeft: 0)
        world.perform(0, world.sessions[0].start())
        var delivered: [SyncMessage] = []
        while let envelope = world.inFlight.first {
            delivered.append(try! SyncMessage(decoding: envelope.bytes))
            try! world.deliver(0)
        }
        #expect(world.sessions[0].isFinished)
        #expect(delivered.count == 4, "\(delivered)")
        #expect(delivered.allSatisfy { if case .hello = $0 { true } else if case .done = $0 { true } else { false } })
    }

    @Test func requestsAskOnlyForWhatIsMissing() {
        let (storeA, storeB, _) = Self.histories()
        var session = SyncSession(device: Self.b, id: 2, role: .responder, vectors: storeB.vectors)
        let actions = session.receive(.hello(SyncHello(device: Self.a, session: 1, vectors: storeA.vectors)))
        let requests = actions.compactMap { action -> DocumentID? in
            if case .send(.request(let document, let since)) = action {
                #expect(since == storeB.vector(of: document))
                return document
            }
            return nil
        }
        // The first document differs and the third is unknown to B; the second, only B's, is not asked for.
        #expect(requests == [Fixtures.document, Fixtures.thirdDocument])
    }

    @Test func aTimeoutAsksAgainOnlyForDocumentsThatGainedNothing() {
        let (storeA, storeB, _) = Self.histories()
        var session = SyncSession(device: Self.b, id: 2, role: .responder, vectors: storeB.vectors)
        _ = session.receive(.hello(SyncHello(device: Self.a, session: 1, vectors: storeA.vectors)))
        func askedAgain(_ actions: [SyncAction]) -> [DocumentID] {
            actions.compactMap { action in
                if case .send(.request(let document, _)) = action { return document }
                return nil
            }
        }
        // Changes of the first document arrive and wait (for a head the next message brings): its replies are still
        // coming, so it is not asked for again; the third, which received nothing, is.
        let first = storeB.vector(of: Fixtures.document)
        _ = session.ingested(Fixtures.document, vector: first, keptWaiting: true)
        #expect(askedAgain(session.tick()) == [Fixtures.thirdDocument])
        // Changes that arrive again, which the store already held, are no progress: both are asked for again.
        let changes = Array(storeA.changes(of: Fixtures.document, since: VersionVector()).prefix(1))
        #expect(
            session.receive(.changes(document: Fixtures.document, changes: changes, heads: []))
                == [.ingest(document: Fixtures.document, changes: changes, heads: [])])
        _ = session.ingested(Fixtures.document, vector: first, keptWaiting: false)
        #expect(askedAgain(session.tick()) == [Fixtures.document, Fixtures.thirdDocument])
    }

    @Test func aPeerWhoseVectorIsCoveredHasItsHeadsVerified() {
        let (storeA, storeB, all) = Self.histories()
        // This side's heads are not given: none of B's heads is known to be one, so each is looked up.
        var session = SyncSession(device: Self.a, id: 1, role: .initiator, vectors: all.vectors)
        _ = session.start()
        let actions = session.receive(
            .hello(SyncHello(device: Self.b, session: 2, replyTo: 1, vectors: storeB.vectors, heads: storeB.heads)))
        #expect(actions.contains(.verify(document: Fixtures.document, heads: storeB.heads[Fixtures.document]!)))
        #expect(
            actions.contains(.verify(document: Fixtures.otherDocument, heads: storeB.heads[Fixtures.otherDocument]!)))
        _ = storeA
    }

    @Test func headsThisSideSharesAreNotLookedUp() {
        let (_, _, all) = Self.histories()
        var session = SyncSession(device: Self.a, id: 1, role: .initiator, vectors: all.vectors, heads: all.heads)
        _ = session.start()
        // The same log on both sides: every head is one of this side's, so nothing needs a lookup.
        let same = session.receive(
            .hello(SyncHello(device: Self.b, session: 2, replyTo: 1, vectors: all.vectors, heads: all.heads)))
        #expect(!same.contains { if case .verify = $0 { true } else { false } }, "\(same)")

        // One head this side does not have as a head (say, an older change) is the only one looked up.
        var other = SyncSession(device: Self.a, id: 3, role: .initiator, vectors: all.vectors, heads: all.heads)
        _ = other.start()
        let foreign = ChangeHash(hashing: Array("not a head here".utf8))
        var theirs = all.heads
        theirs[Fixtures.document] = (theirs[Fixtures.document] ?? []) + [foreign]
        let actions = other.receive(
            .hello(SyncHello(device: Self.b, session: 4, replyTo: 3, vectors: all.vectors, heads: theirs)))
        let verified = actions.compactMap { action -> [ChangeHash]? in
            if case .verify(let document, let heads) = action, document == Fixtures.document { return heads }
            return nil
        }
        #expect(verified == [[foreign]], "\(actions)")
    }

    @Test func lateMessagesOfAnotherSessionAreIgnored() {
        let (storeA, storeB, _) = Self.histories()
        var initiator = SyncSession(device: Self.a, id: 5, role: .initiator, vectors: storeA.vectors)
        _ = initiator.start()
        // A hello answering an earlier session (4) of A's is not this session's answer.
        #expect(
            initiator.receive(.hello(SyncHello(device: Self.b, session: 9, replyTo: 4, vectors: storeB.vectors)))
                .isEmpty)
        #expect(initiator.peer == nil)
        _ = initiator.receive(.hello(SyncHello(device: Self.b, session: 10, replyTo: 5, vectors: [:])))
        #expect(initiator.isComplete)
        // A `done` addressed to the earlier session does not finish this one.
        _ = initiator.receive(.done(from: 9, to: 4))
        #expect(!initiator.isFinished)
        _ = initiator.receive(.done(from: 10, to: 5))
        #expect(initiator.isFinished)
    }

    @Test func largeRepliesAreSplitWithinTheLimits() {
        var maker = ChangeMaker(document: Fixtures.document)
        var last = maker.make(Self.a, "0")
        for index in 1..<10 { last = maker.make(Self.a, on: [last], String(repeating: "x", count: index * 10)) }
        let changes = maker.made.map(EncodedChange.init)
        var session = SyncSession(
            device: Self.a, id: 1, role: .initiator, vectors: [:],
            limits: SyncSession.Limits(changesPerMessage: 4, bytesPerMessage: 300))
        let messages = session.fetched(changes, heads: [], of: Fixtures.document).compactMap {
            action -> [EncodedChange]? in
            if case .send(.changes(_, let batch, _)) = action { return batch }
            return nil
        }
        #expect(messages.flatMap { $0 } == changes)
        for batch in messages {
            #expect(batch.count <= 4)
            #expect(batch.count == 1 || batch.reduce(0) { $0 + $1.bytes.count } <= 300)
        }
    }
}
