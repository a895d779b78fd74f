import FolioCore

/// Work that time makes due, on deadlines: an edit group commits when its grouping interval has passed since the last
/// edit, the document autosaves when it has been idle long enough or holds too many unsaved changes
/// (``AutosavePolicy``), the other devices' selections are placed when a placement was put off, and a selection not
/// heard again for 30 s (`PresenceTracking.timeout`) goes. A document sleeps until the earliest of these deadlines, and a day at a time while none is
/// set; an edit, a commit or a restore that brings a deadline closer wakes it.
extension Document {
    /// How long a document waits before trying due work again that its last run left due (a save that failed).
    static var retryInterval: Duration { .seconds(1) }

    /// The loop and its sleeps run on the document's queue, not Swift's cooperative pool: a program that keeps
    /// the pool busy does not delay a document's commits and saves.
    func startBackgroundWork() {
        timer.loop = Task(executorPreference: executor) { [weak self] in
            var ran = false
            while !Task.isCancelled {
                // The document is held only while arming the timer and running what is due, never while asleep.
                guard let sleeper = await self?.armTimer(afterRun: ran) else { return }
                await sleeper.value
                guard !Task.isCancelled else { return }
                // A sleep cut short by a closer deadline is armed again for it.
                ran = !sleeper.isCancelled
                if ran { try? await self?.runDueWorkOnTimer() }
            }
        }
    }

    /// Does what time has made due: commits an idle group, saves an idle or long-unsaved document. Called when a
    /// deadline passes, or by the owner of an injected clock after moving it.
    ///
    /// - Throws: ``DocumentError`` when a commit fails (a failed autosave only sets `.savingError`).
    public func runDueWork() throws(DocumentError) {
        guard !state.contains(.closed) else { return }
        let now = library.clock.now()
        placePresenceIfDue(now: now.millisecondsSince1970)
        expirePresence(now: now.millisecondsSince1970)
        let policy = library.autosave
        if policy.groupIsDue(editing, at: now) {
            try commit()
        } else if policy.uncommittedEditsAreDue(editing, at: now, live: library.syncsLive) {
            try commitUncommittedEdits()
        }
        try autosaveIfDue(now: now)
    }

    private func runDueWorkOnTimer() throws {
        timer.wakeUps += 1
        try runDueWork()
    }

    /// The earliest time (milliseconds since 1970, by the library's clock) at which ``runDueWork()`` has something to
    /// do, or `nil` when nothing will be due until the document changes.
    func nextDueTime(now: Int64) -> Int64? {
        let due = library.autosave.nextDueTime(
            editing, changeCount: changeCount, savable: !info.isDeleted, live: library.syncsLive, now: now)
        // The others' selections, when a placement was put off, and when the oldest expires (see
        // `Document+Presence.swift`).
        let presence = [presenceTracking.placementDue, presenceExpiry].compactMap { $0 }.min()
        guard let presence else { return due }
        return min(due ?? .max, presence)
    }

    /// Starts the sleep until the next deadline (at least ``retryInterval`` after a run that left work due), and
    /// returns it; `nil` once the document is closed.
    private func armTimer(afterRun: Bool) -> Task<Void, Never>? {
        guard !state.contains(.closed) else { return nil }
        let now = library.clock.now().millisecondsSince1970
        // Nothing due: a day at a time, until an edit sets a deadline (and cancels this sleep).
        let day: Int64 = 86_400_000
        var due = min(nextDueTime(now: now) ?? .max, now.addingReportingOverflow(day).overflow ? .max : now + day)
        // Work a run left due (a save that failed) is tried again a little later; a closer deadline still wakes it.
        let retry = Int64(Self.retryInterval.components.seconds * 1_000)
        if afterRun, due <= now { due = now + retry }
        timer.armedDeadline = due
        let delay = Duration.milliseconds(max(0, due.subtractingReportingOverflow(now).partialValue))
        let sleeper = Task(executorPreference: executor) { _ = try? await Task.sleep(for: delay) }
        timer.sleeper = sleeper
        return sleeper
    }

    /// Wakes the sleeping timer when the document now has work due before the deadline it sleeps until: called when
    /// an edit or a commit changes what is due. It runs at every keystroke, so it reads the clock only when the
    /// unsaved-change limit is reached (the one deadline that is "now").
    func dueWorkMayComeSooner() {
        guard timer.isRunning else { return }
        let policy = library.autosave
        let limitReached = policy.unsavedChangeLimit.map { changeCount >= $0 } ?? false
        // Typing on: every deadline an edit sets is at least the shortest interval after it (a live commit's is set
        // by the first edit not yet committed, which is the one that calls this), so a timer armed before that needs
        // nothing (this runs at every keystroke).
        let liveDelay = library.syncsLive ? policy.liveCommitDelay ?? .max : .max
        if !limitReached, let last = editing.lastEditTime,
            timer.armedDeadline
                <= AutosavePolicy.deadline(
                    after: last, min(policy.groupingInterval, policy.idleInterval ?? .max, liveDelay))
        {
            return
        }
        let now = limitReached ? library.clock.now().millisecondsSince1970 : .max
        if let due = nextDueTime(now: now) { timer.wake(for: due) }
    }
}
