/// Bounds on what a store keeps on behalf of peers, so that a peer cannot make it grow without end.
public struct StoreLimits: Hashable, Sendable {
    /// At most this many changes of one document wait for their dependencies in the pending table; a change that
    /// arrives early while as many wait is turned away (``IngestResult/turnedAway``) and comes again with a later
    /// sync. 65,536 by default: far more than a sync session has in flight, and a few megabytes of small changes.
    public var waitingChangesPerDocument: Int
    /// Of those, at most this many may wait for a signed head of their device (``IngestResult/unvouched``), so
    /// that changes nobody vouches for (made up under any identity, at no cost) cannot crowd out the ones that wait
    /// for their dependencies. 4,096 by default: a sender puts a head of each device in every message, so honest
    /// changes wait for one a message or two (see `PartHeads` in FolioSync).
    public var unvouchedChangesPerDocument: Int
    /// At most this many bytes of change bodies wait for a signed head across the whole store, whatever their
    /// documents. An unvouched change that would pass the bound makes room by dropping the unvouched changes that
    /// arrived before the ingest that brings it, oldest first (``IngestResult/evicted``); when those are not enough
    /// (the change is larger than the bound, or changes of the same call fill it), it is turned away
    /// (``IngestResult/turnedAway``). Changes vouched for are not counted.
    ///
    /// 32 MiB by default: a sync message is at most 16 MiB (its frame's bound), and an honest sender's changes wait
    /// for a head at most until its next message, so two whole messages of a peer fit; dropping the oldest first
    /// means a peer that fills the bound with junk once does not keep later honest changes out, it has to keep
    /// sending. Far below what a library holds, and the most junk a peer can park in one store.
    public var unvouchedBytes: Int
    /// An unvouched change that has waited this long (by the store's clock, from its arrival) is dropped: at the
    /// start of the next ingest (``IngestResult/expired``), or by ``UnvouchedChanges/dropExpired(now:)``.
    /// Changes vouched for wait as long as their dependencies take.
    ///
    /// 24 hours by default: an honest change waits for a head a message or so; a day covers a sync interrupted
    /// between two messages and resumed later, and bounds how long junk holds its bytes.
    public var unvouchedAge: Duration
    /// The largest blob a change may refer to (`BlobReference.size`), in bytes: a change from a peer that refers
    /// to a larger one is refused (`invalidChange`), and so is a larger blob offered to the store; a library writes a
    /// larger member into its change instead. 12 MiB by default: a large photo, and the most one sync message
    /// carries (`SyncMessage.Limits.blobMessageBytes`).
    public var blobBytes: Int
    /// The most blobs one change may refer to: a change from a peer that refers to more is refused
    /// (`invalidChange`). 1,024 by default: a package document whose every member changed at once.
    public var blobsPerChange: Int

    /// Creates limits.
    ///
    /// - Precondition: every count and byte bound is at least 0, and the age is not negative.
    public init(
        waitingChangesPerDocument: Int = 65_536, unvouchedChangesPerDocument: Int = 4_096,
        unvouchedBytes: Int = 32 << 20, unvouchedAge: Duration = .seconds(24 * 60 * 60), blobBytes: Int = 12 << 20,
        blobsPerChange: Int = 1_024
    ) {
        precondition(
            waitingChangesPerDocument >= 0 && unvouchedChangesPerDocument >= 0 && unvouchedBytes >= 0
                && blobBytes >= 0 && blobsPerChange >= 0,
            "a limit cannot be negative")
        self.blobBytes = blobBytes
        self.blobsPerChange = blobsPerChange
        precondition(unvouchedAge >= .zero, "an age cannot be negative")
        self.waitingChangesPerDocument = waitingChangesPerDocument
        self.unvouchedChangesPerDocument = unvouchedChangesPerDocument
        self.unvouchedBytes = unvouchedBytes
        self.unvouchedAge = unvouchedAge
    }

    /// ``unvouchedAge`` in whole milliseconds (the unit of arrival times), rounded down and at most `Int64.max`.
    var unvouchedAgeMilliseconds: Int64 {
        let (seconds, attoseconds) = unvouchedAge.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        let (sum, sumOverflow) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflow || sumOverflow ? .max : sum
    }
}
