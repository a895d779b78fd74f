import FolioCore

/// A decision of the conflict engine to carry out: the resolution change to append, the heads it is made on, what
/// the document shows afterwards and, for `keepBoth`, the documents to create first.
public struct ConflictSettlement<Model: DocumentModel>: Sendable {
    /// The resolution to record.
    public let resolution: Resolution
    /// The heads the resolution change is made on: every competing head, then the absorbed heads.
    public let parents: [ChangeHash]
    /// The state the document shows once the resolution is recorded.
    public let state: Model
    /// The documents to create before the resolution is recorded (one per version a `keepBoth` does not keep here).
    public let copies: [ConflictCopy<Model>]

    /// Creates a settlement.
    public init(resolution: Resolution, parents: [ChangeHash], state: Model, copies: [ConflictCopy<Model>] = []) {
        self.resolution = resolution
        self.parents = parents
        self.state = state
        self.copies = copies
    }
}
