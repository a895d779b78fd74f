import FolioCore

/// One step of a scenario run: what was done, when, and what followed from it.
public struct TimelineEntry: Codable, Hashable, Sendable {
    /// The step's place in the scenario, from 1.
    public var step: Int
    /// The line of the scenario file the step starts on, if known.
    public var line: Int?
    /// Simulated time when the step ran: ISO 8601 in UTC with milliseconds (`2026-01-01T00:00:30.000Z`).
    public var time: String
    /// The step on one line, such as `edit iPad Notes: insert "Hi" at 0`.
    public var action: String
    /// What followed, in order: changes appended or delivered, conflicts found or resolved, saves, crashes.
    public var events: [String]
    /// Why the step failed (an expectation that did not hold, an invariant broken); absent when it held.
    public var failure: String?

    /// Creates an entry.
    public init(
        step: Int, line: Int? = nil, time: String, action: String, events: [String] = [], failure: String? = nil
    ) {
        self.step = step
        self.line = line
        self.time = time
        self.action = action
        self.events = events
        self.failure = failure
    }

    /// Creates an entry at `time`, written in the report's time format.
    public init(
        step: Int, line: Int? = nil, time: Timestamp, action: String, events: [String] = [], failure: String? = nil
    ) {
        self.init(step: step, line: line, time: time.description, action: action, events: events, failure: failure)
    }
}
