import FolioCore

/// Heads that share one state: one version of a document.
public struct HeadGroup<Model: DocumentModel>: Sendable {
    /// The heads with this state, in causal order (lamport, then device).
    public var heads: [Change]
    /// The state they share.
    public var state: Model

    /// Creates a group.
    ///
    /// - Precondition: `heads` is not empty.
    public init(heads: [Change], state: Model) {
        precondition(!heads.isEmpty, "a version has at least one head")
        self.heads = heads
        self.state = state
    }

    /// The group's latest head (highest lamport, then device).
    public var head: Change { heads.winningHead()! }

    /// Whether one of the heads has this hash.
    public func contains(_ hash: ChangeHash) -> Bool { heads.contains { $0.hash == hash } }
}
