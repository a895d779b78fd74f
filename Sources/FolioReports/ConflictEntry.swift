/// One conflict of a document: competing versions, and how they were settled (or that they wait for a person).
public struct ConflictEntry: Codable, Hashable, Sendable {
    /// Open or resolved.
    public enum Status: String, Codable, Hashable, Sendable {
        /// Waiting for a decision on at least one device.
        case open
        /// Settled by a resolution change.
        case resolved
    }

    /// A stable identity: the first 12 hex digits of the SHA-256 of the competing versions' head hashes in
    /// ascending order, followed for a resolved conflict by the resolution's hash.
    public var id: String
    /// Open or resolved.
    public var status: Status
    /// The devices that hold this conflict (open there, or whose log holds its resolution), in report order.
    public var seenBy: [String] = []
    /// The common ancestor: the latest change every version includes (short hash); absent when none.
    public var ancestorHead: String?
    /// The competing versions: the one devices showed first, then the others in causal order.
    public var versions: [VersionEntry]
    /// The strategy: for a resolved conflict, the one that settled it; for an open one, the policy that left it
    /// to a person.
    public var strategy: String?
    /// The resolution; absent while open.
    public var resolution: ResolutionEntry?
}

/// One competing version.
public struct VersionEntry: Codable, Hashable, Sendable {
    /// The device that made its head.
    public var device: String
    /// The head's wall time, by its device's clock.
    public var time: String
    /// The head's vector (its causal context).
    public var vector: [VectorEntry]
    /// The head (short hash): the latest of the heads sharing this state.
    public var head: String
    /// Every head with this state (short hashes), in causal order.
    public var heads: [String]
    /// Whether it is the version every device showed while the conflict stood.
    public var isCurrent: Bool
    /// How it differs from the common ancestor.
    public var changes: [ChangeEntry]
}

/// One difference between a version and the common ancestor.
public struct ChangeEntry: Codable, Hashable, Sendable {
    /// `added`, `removed` or `changed`.
    public var kind: String
    /// Where, in the model's words: `line 3`, `lines 3–5`, `after line 2`, `r1.name`, `images/cover.png`.
    public var location: String
    /// The ancestor's value there, as lines without terminators (empty when absent).
    public var base: [String]
    /// The version's value there, as lines without terminators (empty when absent).
    public var version: [String]
}

/// How a conflict was settled.
public struct ResolutionEntry: Codable, Hashable, Sendable {
    /// The resolution change (short hash).
    public var head: String
    /// The device that resolved.
    public var resolvedBy: String
    /// The resolution's wall time, by that device's clock.
    public var time: String
    /// `userChoice`, `latestWins`, `merge`, `keepBoth` or `custom:NAME`.
    public var strategy: String
    /// The heads whose versions were kept (short hashes, ascending); empty when new contents replaced them all.
    public var chosen: [String]
    /// The heads whose versions were discarded (short hashes, ascending).
    public var discarded: [String]
    /// `true` for a `merge` that stores no contents: the text is merged character by character from the change
    /// graph. Absent otherwise.
    public var characterLevel: Bool?
}

/// One resolution and what it discarded: an entry of the loss ledger.
public struct LossEntry: Codable, Hashable, Sendable {
    /// The resolution change (short hash).
    public var resolution: String
    /// The device that resolved.
    public var resolvedBy: String
    /// How it was settled.
    public var strategy: String
    /// The resolution's wall time.
    public var time: String
    /// The versions it discarded (empty for a clean merge). They stay in history and can be brought back.
    public var discarded: [DiscardedVersionEntry]
}

/// A version a resolution discarded.
public struct DiscardedVersionEntry: Codable, Hashable, Sendable {
    /// Its head (short hash).
    public var head: String
    /// The device that made it.
    public var device: String
    /// The head's wall time.
    public var time: String
    /// Its contents, as ``DocumentOnDevice/contents`` renders them.
    public var contents: [String]
}
