import FolioCore

/// A document's heads split by the content rule (``PrimaryParentRule/contentHeads(among:)``).
public struct ContentHeads: Hashable, Sendable {
    /// The heads that are versions: each carries contents of its own.
    public var versions: [Change]
    /// The heads that only renamed or moved contents another head includes: they compete with nothing, and the next
    /// change is made on them too, which joins them.
    public var absorbed: [Change]

    /// Creates a split.
    public init(versions: [Change], absorbed: [Change]) {
        self.versions = versions
        self.absorbed = absorbed
    }

    /// The version every device shows: the highest lamport, then the highest device; `nil` without heads.
    public var winner: Change? {
        versions.winningHead()
    }
}
