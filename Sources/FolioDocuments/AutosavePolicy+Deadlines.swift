import FolioCore

/// When the policy makes work due for a document, as pure decisions over its editing session: the document asks
/// these at each edit and when its timer wakes, and sleeps until ``nextDueTime(_:changeCount:now:)``.
extension AutosavePolicy {
    /// Whether the open group ends before an edit at `now`: the grouping interval has passed since the last edit,
    /// or the group holds ``groupLimit`` operations not yet committed, or (once some of its edits were committed
    /// while the library synced live) ``groupLimit`` edits or as many changes as one undo step names.
    @inline(__always)
    func groupEnds<Model>(_ editing: inout EditingSession<Model>, before now: Timestamp) -> Bool {
        guard editing.hasOpenGroup, let last = editing.lastEditTime else { return false }
        return now.millisecondsSince1970 - last.millisecondsSince1970 > groupingInterval
            || editing.group.holds(atLeast: groupLimit)
            || (editing.group.hasCommittedEdits
                && (editing.group.editCount >= groupLimit
                    || editing.stepChanges.count >= UndoHistory<Model.Operation>.sourceLimit))
    }

    /// Whether the open group is due to be committed at `now`: the grouping interval has passed since its last edit.
    @inline(__always)
    func groupIsDue<Model>(_ editing: EditingSession<Model>, at now: Timestamp) -> Bool {
        guard editing.hasOpenGroup, let last = editing.lastEditTime else { return false }
        return now.millisecondsSince1970 - last.millisecondsSince1970 >= groupingInterval
    }

    /// Whether the open group's edits not yet committed are due to be committed at `now` while the library syncs
    /// live (`live`): ``liveCommitDelay`` has passed since the first of them.
    @inline(__always)
    func uncommittedEditsAreDue<Model>(_ editing: EditingSession<Model>, at now: Timestamp, live: Bool) -> Bool {
        guard live, let delay = liveCommitDelay, editing.group.hasUncommittedEdits,
            let first = editing.firstUncommittedEditTime
        else { return false }
        return now.millisecondsSince1970 - first.millisecondsSince1970 >= delay
    }

    /// Whether a document with `changeCount` unsaved changes is due to be saved at `now`: it holds too many, or has
    /// been idle long enough.
    @inline(__always)
    func saveIsDue(changeCount: Int, lastEdit: Timestamp?, at now: Timestamp) -> Bool {
        guard changeCount > 0 else { return false }
        if let limit = unsavedChangeLimit, changeCount >= limit { return true }
        guard let idle = idleInterval, let lastEdit else { return false }
        return now.millisecondsSince1970 - lastEdit.millisecondsSince1970 >= idle
    }

    /// The earliest time (milliseconds since 1970) at which a group, a commit of edits while the library syncs live
    /// (`live`) or a save is due, or `nil` when nothing will be due until the document changes. `savable` is false
    /// for a document that is not saved (a deleted one).
    @inline(__always)
    func nextDueTime<Model>(
        _ editing: EditingSession<Model>, changeCount: Int, savable: Bool, live: Bool = false, now: Int64
    ) -> Int64? {
        var due: Int64?
        func propose(_ time: Int64) { due = min(due ?? .max, time) }
        if editing.hasOpenGroup, let last = editing.lastEditTime {
            propose(Self.deadline(after: last, groupingInterval))
        }
        if live, let delay = liveCommitDelay, editing.group.hasUncommittedEdits,
            let first = editing.firstUncommittedEditTime
        {
            propose(Self.deadline(after: first, delay))
        }
        if changeCount > 0, savable {
            if let limit = unsavedChangeLimit, changeCount >= limit { propose(now) }
            if let idle = idleInterval, let last = editing.lastEditTime { propose(Self.deadline(after: last, idle)) }
        }
        return due
    }

    /// `interval` milliseconds after `last`; an interval of `Int64.max` ("only when told") puts the deadline at the
    /// end of time, not past it.
    static func deadline(after last: Timestamp, _ interval: Int64) -> Int64 {
        let (sum, overflow) = last.millisecondsSince1970.addingReportingOverflow(max(interval, 0))
        return overflow ? .max : sum
    }
}
