import FolioCore

/// One resolution and what it discarded: an entry of the loss ledger.
public struct LossRecord<Model: DocumentModel>: Sendable {
    /// The resolution change.
    public let resolution: Change
    /// The device that resolved.
    public let resolvedBy: Device
    /// How it was settled.
    public let strategy: Resolution.Strategy
    /// The heads of the versions it kept, in ascending order: the chosen version, or every version a merge took as
    /// its input.
    public let chosen: [ChangeHash]
    /// The versions it discarded (empty for a clean merge).
    public let discarded: [DiscardedVersion<Model>]

    /// Creates an entry.
    public init(
        resolution: Change, resolvedBy: Device, strategy: Resolution.Strategy, chosen: [ChangeHash] = [],
        discarded: [DiscardedVersion<Model>]
    ) {
        self.resolution = resolution
        self.resolvedBy = resolvedBy
        self.strategy = strategy
        self.chosen = chosen
        self.discarded = discarded
    }
}
