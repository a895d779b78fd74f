import FolioCore

/// Work that time makes due, on deadlines: an edit group commits when its grouping interval has passed since the last
/// edit, and the document autosaves when it has been idle long enough or holds too many unsaved changes
/// (``AutosavePolicy``). A document sleeps until the earliest of these deadlines, and a day at a time while none is
/// set; an edit, a commit or a restore that brings a deadline closer wakes it.
extension Document {
    /// How long a document waits before trying due work again that its last run left due (a save that failed).
    static var retryInterval: Duration { .seconds(1) }

    /// The loop and its sleeps run on the document's own queue, not Swift's cooperative pool: a program that keeps
    /// the pool busy does not delay a document's commits and saves.
    func startBackgroundWork() {
        backgroundTask = Task(executorPreference: executor) { [weak self] in
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
    public func runDueWork() throws {
        guard !state.contains(.closed) else { return }
        let now = library.clock.now()
        let policy = library.autosave
        if !group.isEmpty, let last = lastEditTime,
            now.millisecondsSince1970 - last.millisecondsSince1970 >= policy.groupingInterval
        {
            try commitGroup()
        }
        try autosaveIfDue(now: now)
    }

    private func runDueWorkOnTimer() throws {
        timerWakeUps += 1
        try runDueWork()
    }

    /// The earliest time (milliseconds since 1970, by the library's clock) at which ``runDueWork()`` has something to
    /// do, or `nil` when nothing will be due until the document changes.
    func nextDueTime(now: Int64) -> Int64? {
        let policy = library.autosave
        var due = Int64.max
        var any = false
        if !group.isEmpty, let last = lastEditTime {
            due = min(due, Self.deadline(after: last, policy.groupingInterval))
            any = true
        }
        if hasUnsavedChanges, !info.isDeleted {
            if let limit = policy.unsavedChangeLimit, changeCount >= limit {
                due = min(due, now)
                any = true
            }
            if let idle = policy.idleInterval, let last = lastEditTime {
                due = min(due, Self.deadline(after: last, idle))
                any = true
            }
        }
        return any ? due : nil
    }

    /// `interval` milliseconds after `last`; an interval of `Int64.max` ("only when told") puts the deadline at the
    /// end of time, not past it.
    static func deadline(after last: Timestamp, _ interval: Int64) -> Int64 {
        let (sum, overflow) = last.millisecondsSince1970.addingReportingOverflow(max(interval, 0))
        return overflow ? .max : sum
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
        armedDeadline = due
        let delay = Duration.milliseconds(max(0, due.subtractingReportingOverflow(now).partialValue))
        let sleeper = Task(executorPreference: executor) { _ = try? await Task.sleep(for: delay) }
        self.sleeper = sleeper
        return sleeper
    }

    /// Wakes the sleeping timer when the document now has work due before the deadline it sleeps until: called when
    /// an edit or a commit changes what is due. It runs at every keystroke, so it reads the clock only when the
    /// unsaved-change limit is reached (the one deadline that is "now").
    func dueWorkMayComeSooner() {
        guard let sleeper else { return }
        let policy = library.autosave
        let limitReached = policy.unsavedChangeLimit.map { changeCount >= $0 } ?? false
        // Typing on: every deadline an edit sets is at least the shorter interval after it, so a timer armed before
        // that needs nothing (this runs at every keystroke).
        if !limitReached, let last = lastEditTime,
            armedDeadline <= Self.deadline(after: last, min(policy.groupingInterval, policy.idleInterval ?? .max))
        {
            return
        }
        let now = limitReached ? library.clock.now().millisecondsSince1970 : .max
        guard let due = nextDueTime(now: now), due < armedDeadline else { return }
        armedDeadline = due
        sleeper.cancel()
    }
}
