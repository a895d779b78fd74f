/// A conflict-inspection report: what happened to a set of documents on a set of devices, why the devices
/// disagree or agree, and what every conflict cost.
///
/// One value, rendered three ways: ``json()`` (the stable schema documented in `docs/reports.md`), ``markdown()``
/// and ``html()`` (a self-contained page). Every rendering is a pure function of the value, so the same report
/// always gives the same bytes; build reports from ordered data only (see ``DocumentReport/assemble(_:devices:)``).
public struct ConflictReport: Codable, Hashable, Sendable {
    /// The schema version this build writes and reads.
    public static let currentSchemaVersion = 1

    /// What the report describes.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// A run of a scenario file (`folio replay`).
        case scenario
        /// A library directory on disk (`folio inspect`).
        case library
    }

    /// Whether a run held every expectation, and what failed.
    public struct Outcome: Codable, Hashable, Sendable {
        /// `true` when nothing failed.
        public var passed: Bool
        /// What failed, in the order found.
        public var failures: [Failure]

        /// Creates an outcome; `passed` defaults to whether `failures` is empty.
        public init(passed: Bool? = nil, failures: [Failure] = []) {
            self.passed = passed ?? failures.isEmpty
            self.failures = failures
        }
    }

    /// One failed expectation or invariant.
    public struct Failure: Codable, Hashable, Sendable {
        /// The 1-based step it belongs to, if any.
        public var step: Int?
        /// The line of the scenario file, if known.
        public var line: Int?
        /// What was expected and what was found, as one sentence.
        public var message: String

        /// Creates a failure.
        public init(step: Int? = nil, line: Int? = nil, message: String) {
            self.step = step
            self.line = line
            self.message = message
        }
    }

    /// The schema version of this value (``currentSchemaVersion`` for reports this build makes).
    public var schemaVersion: Int
    /// A title: the scenario's name, or the library's.
    public var title: String
    /// Free text shown under the title.
    public var description: String?
    /// A scenario run or a library.
    public var kind: Kind
    /// The scenario file or library directory, as the path was given.
    public var source: String?
    /// The scenario's seed.
    public var seed: UInt64?
    /// The scenario's conflict strategy (`askUser`, `latestWins`, `merge`, `keepBoth`).
    public var strategy: String?
    /// Whether the run held; for a library, whether its store verified as sound.
    public var outcome: Outcome?
    /// The devices, in the order the report shows them.
    public var devices: [ReportDevice]
    /// The steps of a run, in order (empty for a library).
    public var timeline: [TimelineEntry]
    /// Every document, by name then identity.
    public var documents: [DocumentReport]

    /// Creates a report of the current schema version.
    public init(
        title: String, description: String? = nil, kind: Kind, source: String? = nil, seed: UInt64? = nil,
        strategy: String? = nil, outcome: Outcome? = nil, devices: [ReportDevice] = [], timeline: [TimelineEntry] = [],
        documents: [DocumentReport] = []
    ) {
        schemaVersion = Self.currentSchemaVersion
        self.title = title
        self.description = description
        self.kind = kind
        self.source = source
        self.seed = seed
        self.strategy = strategy
        self.outcome = outcome
        self.devices = devices
        self.timeline = timeline
        self.documents = documents
    }

    /// The outcome in words, as the renderings show it: a run `passed` or `failed`; a library's store `verified`
    /// or `failed verification`.
    var outcomeWords: (label: String, passed: String, failed: String) {
        switch kind {
        case .scenario: ("Outcome", "passed", "failed")
        case .library: ("Store", "verified", "failed verification")
        }
    }

    /// The outcome as a sentence: "Passed", "Failed"; "Store verified", "Store failed verification".
    func outcomeSentence(passed: Bool) -> String {
        let words = outcomeWords
        let word = passed ? words.passed : words.failed
        return kind == .scenario ? word.prefix(1).uppercased() + word.dropFirst() : "\(words.label) \(word)"
    }

    /// Whether anything needs a person: a failed outcome, or a conflict still open.
    public var needsAttention: Bool {
        outcome?.passed == false || documents.contains { $0.conflicts.contains { $0.status == .open } }
    }
}

/// A device taking part.
public struct ReportDevice: Codable, Hashable, Sendable {
    /// Its display name, as the rest of the report names it: with its person when known (`Anna on iPad`).
    public var name: String
    /// Its identity (canonical UUID text).
    public var id: String
    /// How far its wall clock is off, as the scenario wrote it (`-90s`); absent when not skewed.
    public var clockSkew: String?
    /// The person the device acts for (`Device.person`); absent when unknown.
    public var person: String?

    /// Creates a device entry.
    public init(name: String, id: String, clockSkew: String? = nil, person: String? = nil) {
        self.name = name
        self.id = id
        self.clockSkew = clockSkew
        self.person = person
    }
}
