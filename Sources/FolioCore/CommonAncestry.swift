/// The common causal past of several versions.
public struct CommonAncestry: Hashable, Sendable {
    /// The changes every version has seen (the pointwise minimum of their vectors).
    public var vector: VersionVector
    /// The heads of that common past, in causal order; empty when the versions share nothing. More than one head
    /// means a criss-cross history: the common ancestor's state is the replay of all of ``vector``.
    public var heads: [ChangeHash]
}
