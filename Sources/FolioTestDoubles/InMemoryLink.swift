import FolioCore

/// A deterministic two-way message pipe with injected faults, in virtual time: the network of one exchange.
///
/// Sent messages get a due time (now, or later when delayed); ``nextDelivery()`` hands out a due message, the
/// oldest or, when the profile reorders, a random one. Time moves only by ``advance()``.
struct InMemoryLink {
    enum Endpoint: Hashable { case initiator, responder }

    /// Counts of the faults injected.
    struct Statistics: Hashable, Sendable {
        var dropped = 0
        var duplicated = 0
        var delayed = 0
        var reordered = 0
    }

    private struct Envelope {
        var to: Endpoint
        var bytes: [UInt8]
        var due: UInt64
    }

    private let faults: FaultProfile
    private var generator: SplitMix64
    private var inFlight: [Envelope] = []  // in sending order
    private(set) var now: UInt64 = 0
    private(set) var statistics = Statistics()

    init(faults: FaultProfile, seed: UInt64) {
        self.faults = faults
        generator = SplitMix64(seed: seed)
    }

    /// Whether no message is on its way.
    var isIdle: Bool { inFlight.isEmpty }

    mutating func send(_ bytes: [UInt8], to endpoint: Endpoint) {
        if chance(faults.drop) {
            statistics.dropped += 1
            return
        }
        let copies = chance(faults.duplicate) ? 2 : 1
        if copies == 2 { statistics.duplicated += 1 }
        for _ in 0..<copies {
            var due = now
            if chance(faults.delay) {
                statistics.delayed += 1
                due += UInt64(Int.random(in: 1...faults.maxDelay, using: &generator))
            }
            inFlight.append(Envelope(to: endpoint, bytes: bytes, due: due))
        }
    }

    /// Takes a message that is due, if any.
    mutating func nextDelivery() -> (to: Endpoint, bytes: [UInt8])? {
        let due = inFlight.indices.filter { inFlight[$0].due <= now }
        guard var index = due.first else { return nil }
        if due.count > 1, chance(faults.reorder) {
            index = due[Int.random(in: 0..<due.count, using: &generator)]
            if index != due.first { statistics.reordered += 1 }
        }
        let envelope = inFlight.remove(at: index)
        return (envelope.to, envelope.bytes)
    }

    /// Takes a message that is due, as ``nextDelivery()``, and with it the due messages right behind it that go to
    /// the same endpoint, as long as they are `batchable` (the first one included) and the link does not reorder:
    /// those would be handed out next, one after the other, whatever the recipient sent in between (its messages
    /// queue behind them).
    mutating func nextDeliveries(batching batchable: ([UInt8]) -> Bool) -> (to: Endpoint, messages: [[UInt8]])? {
        guard let first = nextDelivery() else { return nil }
        var messages = [first.bytes]
        guard faults.reorder <= 0, batchable(first.bytes) else { return (first.to, messages) }
        while let index = inFlight.firstIndex(where: { $0.due <= now }), inFlight[index].to == first.to,
            batchable(inFlight[index].bytes)
        {
            messages.append(inFlight.remove(at: index).bytes)
        }
        return (first.to, messages)
    }

    /// Moves virtual time on by one tick.
    mutating func advance() {
        now += 1
    }

    /// Draws `true` with the given probability; draws nothing when it is 0 or 1, so a reliable link uses no randomness.
    private mutating func chance(_ probability: Double) -> Bool {
        if probability <= 0 { return false }
        if probability >= 1 { return true }
        return Double(generator.next() >> 11) * 0x1p-53 < probability
    }
}
