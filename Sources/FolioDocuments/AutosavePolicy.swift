/// When a document saves by itself, and how rapid edits are grouped into changes.
///
/// Time is read from the library's injected clock, so a test or a simulation decides when "later" is. Due work
/// runs when the document is next used, or when ``Document/runDueWork()`` is called (with the system clock, an open
/// document's timer does so at each deadline; a simulation calls it after moving its clock).
public struct AutosavePolicy: Hashable, Sendable {
    /// Save once no edit has been made for this long (milliseconds); `nil` never saves on idleness.
    public var idleInterval: Int64?
    /// Save once this many changes are unsaved; `nil` never saves on a count.
    public var unsavedChangeLimit: Int?
    /// Save when the document is closed.
    public var saveOnClose: Bool
    /// Edits made within this many milliseconds of each other form one change (one undo step); 0 makes every edit
    /// call its own change, committed before the call returns.
    public var groupingInterval: Int64
    /// A group is committed once it holds this many operations (after combining) not yet committed, or, once a live
    /// sync committed some of its edits (``liveCommitDelay``), this many edits, whatever the timing.
    public var groupLimit: Int
    /// While the library syncs live (``DocumentLibrary/syncsLive``), the edits of an open group are committed as a
    /// change this many milliseconds after the first of them, so that other devices see them within about that
    /// long, while the group stays one undo step until ``groupingInterval`` ends it. 0 (the default) commits each
    /// edit at once: a keystroke is a change of a few bytes once folded, and two devices' keystrokes are concurrent
    /// only when typed within the network's delay of each other; a longer delay batches bursts of edits into fewer
    /// changes, at the price of that much latency and of more concurrent changes between devices typing at once.
    /// `nil` commits edits only when their group ends, live or not.
    public var liveCommitDelay: Int64?

    /// Creates a policy.
    public init(
        idleInterval: Int64? = 5_000, unsavedChangeLimit: Int? = 100, saveOnClose: Bool = true,
        groupingInterval: Int64 = 1_000, groupLimit: Int = 10_000, liveCommitDelay: Int64? = 0
    ) {
        precondition(groupLimit >= 1, "a group holds at least one operation")
        self.idleInterval = idleInterval
        self.unsavedChangeLimit = unsavedChangeLimit
        self.saveOnClose = saveOnClose
        self.groupingInterval = groupingInterval
        self.groupLimit = groupLimit
        self.liveCommitDelay = liveCommitDelay.map { max($0, 0) }
    }

    /// Saves after 5 s idle or 100 unsaved changes and on close; groups edits made within 1 s into one undo step,
    /// committed then, or each edit at once while the library syncs live.
    public static let standard = AutosavePolicy()

    /// Never saves by itself; every edit is its own change, committed at once. What the simulator uses.
    public static let manual = AutosavePolicy(
        idleInterval: nil, unsavedChangeLimit: nil, saveOnClose: false, groupingInterval: 0)
}
