extension Scenario {
    /// The assertions of one `expect` step; every key the file leaves out is `nil` and not checked.
    ///
    /// The document keys (`state`, `conflictVersions`, `text`, `contains`, `records`, `images`, `exists`, `versions`,
    /// `namedVersions`, `losses`) speak of
    /// ``document`` on ``device``, or on every device when ``device`` is `nil`. `converged` and `lostChanges` speak
    /// of the whole run. The parser has checked that a document key comes with a document, that it fits the
    /// document's model, and that at least one assertion is made.
    public struct Expectation: Hashable, Sendable {
        /// The document the document keys speak of, by display name.
        public var document: String?
        /// The device to check; `nil` checks every device.
        public var device: String?
        /// The document's state.
        public var state: ExpectedState?
        /// How many competing versions are surfaced.
        public var conflictVersions: Int?
        /// The exact text (text model).
        public var text: String?
        /// A substring of the text (text model).
        public var contains: String?
        /// Records (by id) that hold at least these fields with these values (records model).
        public var records: [String: [String: String]]?
        /// Exactly these image names (pages model).
        public var images: Set<String>?
        /// Whether the document exists on the device (`false`: absent or deleted).
        public var exists: Bool?
        /// Whether every device that is online and not partitioned holds the same changes, the same vectors and the
        /// same contents for every document.
        public var converged: Bool?
        /// How many changes that some device acknowledged are missing after a full sync.
        public var lostChanges: Int?
        /// How many versions the document's history lists (`Document.history()`).
        public var versions: Int?
        /// The names of the history's named versions, oldest first.
        public var namedVersions: [String]?
        /// How many entries the document's loss ledger holds (`Document.lossLedger()`).
        public var losses: Int?

        /// Creates an expectation; every assertion left `nil` is not checked.
        public init(
            document: String? = nil,
            device: String? = nil,
            state: ExpectedState? = nil,
            conflictVersions: Int? = nil,
            text: String? = nil,
            contains: String? = nil,
            records: [String: [String: String]]? = nil,
            images: Set<String>? = nil,
            exists: Bool? = nil,
            converged: Bool? = nil,
            lostChanges: Int? = nil,
            versions: Int? = nil,
            namedVersions: [String]? = nil,
            losses: Int? = nil
        ) {
            self.document = document
            self.device = device
            self.state = state
            self.conflictVersions = conflictVersions
            self.text = text
            self.contains = contains
            self.records = records
            self.images = images
            self.exists = exists
            self.converged = converged
            self.lostChanges = lostChanges
            self.versions = versions
            self.namedVersions = namedVersions
            self.losses = losses
        }

        /// Every key an `expect` step may hold, in the order `docs/scenarios.md` lists them (and the writer writes
        /// them).
        public static let keys = [
            "document", "device", "state", "conflictVersions", "text", "contains", "records", "images", "exists",
            "converged", "lostChanges", "versions", "namedVersions", "losses",
        ]
    }

    /// A document state an `expect` step can ask for.
    public enum ExpectedState: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// No state flag is set.
        case normal
        /// The document has competing versions.
        case inConflict
        /// The document is closed.
        case closed
        /// The last save failed.
        case savingError

        /// The file's word, such as `inConflict`.
        public var description: String { rawValue }
    }
}
