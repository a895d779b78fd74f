/// What the causal graph needs to know of a change.
public struct CausalNode: Hashable, Sendable {
    /// The change's identity.
    public var id: ChangeID
    /// Its hash.
    public var hash: ChangeHash
    /// The hashes of the heads it was made on.
    public var parents: [ChangeHash]
    /// Its causal context, itself included.
    public var vector: VersionVector
    /// Its Lamport timestamp.
    public var lamport: UInt64

    /// Creates a node.
    public init(id: ChangeID, hash: ChangeHash, parents: [ChangeHash], vector: VersionVector, lamport: UInt64) {
        self.id = id
        self.hash = hash
        self.parents = parents
        self.vector = vector
        self.lamport = lamport
    }

    /// The node of `change`.
    public init(_ change: Change) {
        self.init(
            id: change.id, hash: change.hash, parents: change.parents, vector: change.vector, lamport: change.lamport)
    }
}
