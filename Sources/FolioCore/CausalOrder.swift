/// How two versions of a document relate in causal (happened-before) order.
public enum CausalOrder: Sendable, Hashable {
    /// Both have seen exactly the same changes.
    case equal
    /// The left side has seen a strict subset of what the right side has seen.
    case before
    /// The left side has seen a strict superset of what the right side has seen.
    case after
    /// Each side has seen a change the other has not: they compete.
    case concurrent
}
