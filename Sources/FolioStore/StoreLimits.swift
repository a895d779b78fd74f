/// Bounds on what a store keeps on behalf of peers, so that a peer cannot make it grow without end.
public struct StoreLimits: Hashable, Sendable {
    /// At most this many changes of one document wait for their dependencies in the pending table; a change that
    /// arrives early while as many wait is turned away (``IngestResult/turnedAway``) and comes again with a later
    /// sync. 65,536 by default: far more than a sync session has in flight, and a few megabytes of small changes.
    public var waitingChangesPerDocument: Int
    /// Of those, at most this many may wait for a signed head of their device (``IngestResult/unvouched``), so
    /// that changes nobody vouches for (made up under any identity, at no cost) cannot crowd out the ones that wait
    /// for their dependencies. 4,096 by default: a sender puts a head in every message, so honest changes wait for
    /// one at most until the next message.
    public var unvouchedChangesPerDocument: Int

    /// Creates limits.
    ///
    /// - Precondition: both are at least 0.
    public init(waitingChangesPerDocument: Int = 65_536, unvouchedChangesPerDocument: Int = 4_096) {
        precondition(waitingChangesPerDocument >= 0 && unvouchedChangesPerDocument >= 0, "a limit cannot be negative")
        self.waitingChangesPerDocument = waitingChangesPerDocument
        self.unvouchedChangesPerDocument = unvouchedChangesPerDocument
    }
}
