import FolioCore

/// Work that time makes due, on deadlines: an edit group commits when its grouping interval has passed since the last
/// edit, and the document autosaves when it has been idle long enough or holds too many unsaved changes
/// (``AutosavePolicy``). A document sleeps until the earliest of these deadlines, and not at all while none is set;
/// an edit that brings a deadline closer wakes it.
extension Document {
    /// How long a document waits before trying due work again that its last run left due (a save that failed).
    static var retryInterval: Duration { .seconds(1) }

    func startBackgroundWork() {
        backgroundTask = Task { [weak self] in
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
        var due: Int64?
        func consider(_ time: Int64) { due = min(due ?? time, time) }
        if !group.isEmpty, let last = lastEditTime {
            consider(last.millisecondsSince1970.addingReportingOverflow(policy.groupingInterval).partialValue)
        }
        if hasUnsavedChanges, !info.isDeleted {
            if let limit = policy.unsavedChangeLimit, changeCount >= limit { consider(now) }
            if let idle = policy.idleInterval, let last = lastEditTime {
                consider(last.millisecondsSince1970.addingReportingOverflow(idle).partialValue)
            }
        }
        return due
    }

    /// Starts the sleep until the next deadline (at least ``retryInterval`` after a run that left work due), and
    /// returns it; `nil` once the document is closed.
    private func armTimer(afterRun: Bool) -> Task<Void, Never>? {
        guard !state.contains(.closed) else { return nil }
        let now = library.clock.now().millisecondsSince1970
        let due = nextDueTime(now: now)
        armedDeadline = due ?? .max
        var delay = due.map { Duration.milliseconds(max(0, $0 - now)) }
        if afterRun, let wait = delay, wait < Self.retryInterval, due! <= now { delay = Self.retryInterval }
        let sleeper = Task {
            // Nothing due: sleeps until an edit sets a deadline (and cancels this sleep).
            _ = try? await Task.sleep(for: delay ?? .seconds(86_400))
        }
        self.sleeper = sleeper
        return sleeper
    }

    /// Wakes the sleeping timer when the document now has work due before the deadline it sleeps until: called when
    /// an edit or a commit changes what is due. It runs at every keystroke, so it reads the clock only when the
    /// unsaved-change limit is reached (the one deadline that is "now").
    func dueWorkMayComeSooner() {
        guard let sleeper else { return }
        let limitReached = library.autosave.unsavedChangeLimit.map { changeCount >= $0 } ?? false
        let now = limitReached ? library.clock.now().millisecondsSince1970 : .max
        guard let due = nextDueTime(now: now), due < armedDeadline else { return }
        armedDeadline = due
        sleeper.cancel()
    }
}
