import FolioCore

/// The handles of an open document's deadline timer: the loop that runs due work, the sleep it waits on and the
/// deadline that sleep is for (milliseconds since 1970 by the library's clock).
struct DueWorkTimer {
    /// The loop (see `Document+DueWork.swift`).
    var loop: Task<Void, Never>?
    /// The sleep the loop waits on; cancelling it wakes the loop.
    var sleeper: Task<Void, Never>?
    /// When the sleep ends.
    var armedDeadline = Int64.max
    /// How many times the timer has woken the document (for tests: a document with nothing due sleeps).
    var wakeUps = 0

    /// Whether the timer runs (the library runs background work and the document is open).
    var isRunning: Bool { sleeper != nil }

    /// Wakes the loop when `due` comes before the deadline it sleeps until.
    mutating func wake(for due: Int64) {
        guard let sleeper, due < armedDeadline else { return }
        armedDeadline = due
        sleeper.cancel()
    }

    /// Stops the loop and its sleep.
    mutating func stop() {
        loop?.cancel()
        loop = nil
        sleeper?.cancel()
        sleeper = nil
    }
}
