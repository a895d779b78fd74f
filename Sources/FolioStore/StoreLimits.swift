/// Bounds on what a store keeps on behalf of peers, so that a peer cannot make it grow without end.
public struct StoreLimits: Hashable, Sendable {
    /// At most this many changes of one document wait for their dependencies in the pending table; a change that
    /// arrives early while as many wait is turned away (``IngestResult/turnedAway``) and comes again with a later
    /// sync. 65,536 by default: far more than a sync session has in flight, and a few megabytes of small changes.
    public var waitingChangesPerDocument: Int

    /// Creates limits.
    ///
    /// - Precondition: `waitingChangesPerDocument >= 0`.
    public init(waitingChangesPerDocument: Int = 65_536) {
        precondition(waitingChangesPerDocument >= 0, "a limit cannot be negative")
        self.waitingChangesPerDocument = waitingChangesPerDocument
    }
}
