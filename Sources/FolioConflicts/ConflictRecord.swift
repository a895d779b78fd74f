import FolioCore

/// One conflict of a document, open or settled: the competing versions, the state they grew from and, once
/// settled, the resolution that settled them. What conflict-inspection reports show.
///
/// Automatic strategies (latest wins, merge, keep both) settle a conflict as soon as a device sees it, so such a
/// conflict is visible afterwards only through its resolution change; ``ConflictEngine/conflictHistory(settledBy:in:devices:)``
/// rebuilds it from there.
public struct ConflictRecord<Model: DocumentModel>: Sendable {
    /// The competing versions: the one every device showed first, then the others in causal order. Each carries
    /// the common ancestor's state and its ``DocumentVersion/changes`` from it.
    public let versions: [DocumentVersion<Model>]
    /// The latest change every version includes (the common ancestor); `nil` when they share no history.
    public let ancestor: Change?
    /// The resolution change; `nil` while the conflict is open.
    public let resolution: Change?
    /// The device that resolved; `nil` while the conflict is open.
    public let resolvedBy: Device?

    /// Creates a record.
    public init(versions: [DocumentVersion<Model>], ancestor: Change?, resolution: Change?, resolvedBy: Device?) {
        self.versions = versions
        self.ancestor = ancestor
        self.resolution = resolution
        self.resolvedBy = resolvedBy
    }

    /// How the conflict was settled; `nil` while it is open.
    public var strategy: Resolution.Strategy? {
        guard case .resolution(let resolution)? = resolution?.kind else { return nil }
        return resolution.strategy
    }

    /// The heads whose versions the resolution kept (ascending); empty while open.
    public var chosen: [ChangeHash] {
        guard case .resolution(let resolution)? = resolution?.kind else { return [] }
        return resolution.chosen
    }

    /// The heads whose versions the resolution discarded (ascending): its loss-ledger entries; empty while open.
    public var discarded: [ChangeHash] {
        guard case .resolution(let resolution)? = resolution?.kind else { return [] }
        return resolution.discarded
    }

    /// Whether a resolution settled it.
    public var isResolved: Bool { resolution != nil }
}
