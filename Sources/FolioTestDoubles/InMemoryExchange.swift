import FolioSync

/// What one exchange on an ``InMemoryHub`` did.
public struct InMemoryExchange: Hashable, Sendable {
    /// The initiator's report.
    public var initiator: SyncReport
    /// The responder's report.
    public var responder: SyncReport
    /// How many timeouts the exchange took.
    public var ticks: Int
    /// Messages the network lost.
    public var dropped: Int
    /// Messages the network delivered twice.
    public var duplicated: Int
    /// Messages the network held back.
    public var delayed: Int
    /// Deliveries out of sending order.
    public var reordered: Int

    init(initiator: SyncReport, responder: SyncReport, ticks: Int, faults: InMemoryLink.Statistics) {
        self.initiator = initiator
        self.responder = responder
        self.ticks = ticks
        dropped = faults.dropped
        duplicated = faults.duplicated
        delayed = faults.delayed
        reordered = faults.reordered
    }

    /// Whether both sides hold everything the other had when the exchange began.
    public var isComplete: Bool { initiator.isComplete }
}
