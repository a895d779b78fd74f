/// The history of one document as a DAG: heads, ancestry, common ancestors and a deterministic topological order.
///
/// Ancestry is decided by version vectors, which each node carries, so the questions cost O(devices), not a walk.
/// Every answer is in a fixed order (causal order: lamport, then device), never in hash-table order.
public struct CausalGraph: Sendable {
    private var nodes: [ChangeID: CausalNode] = [:]
    private var idByHash: [ChangeHash: ChangeID] = [:]
    private var headSet: Set<ChangeHash> = []
    private var referenced: Set<ChangeHash> = []

    /// An empty history.
    public init() {}

    /// A history made of `nodes`, added in any order.
    public init(_ nodes: some Sequence<CausalNode>) {
        for node in nodes { insert(node) }
    }

    /// The number of changes.
    public var count: Int { nodes.count }

    /// Adds a change; adding one already present does nothing.
    ///
    /// - Complexity: O(parents) amortized.
    public mutating func insert(_ node: CausalNode) {
        guard nodes[node.id] == nil else { return }
        nodes[node.id] = node
        idByHash[node.hash] = node.id
        for parent in node.parents {
            headSet.remove(parent)
            referenced.insert(parent)
        }
        // A node is a head unless a node already present names it as a parent.
        if !referenced.contains(node.hash) { headSet.insert(node.hash) }
    }

    /// The node with this identity, if present.
    public subscript(id: ChangeID) -> CausalNode? { nodes[id] }

    /// The node with this hash, if present.
    public subscript(hash: ChangeHash) -> CausalNode? { idByHash[hash].flatMap { nodes[$0] } }

    /// The changes no other change was made on, in causal order.
    public var heads: [CausalNode] {
        Self.causalOrder(headSet.compactMap { self[$0] })
    }

    /// The union of every change's vector: the whole history.
    public var vector: VersionVector {
        heads.reduce(VersionVector()) { $0.merging($1.vector) }
    }

    /// Whether `ancestor` happened before `descendant` (a change is not its own ancestor).
    ///
    /// - Complexity: O(log devices).
    public func isAncestor(_ ancestor: ChangeID, of descendant: ChangeID) -> Bool {
        guard ancestor != descendant, let node = nodes[descendant] else { return false }
        return node.vector.contains(ancestor)
    }

    /// The common causal past of the changes named by `hashes`.
    ///
    /// - Precondition: every hash names a change in the graph.
    /// - Complexity: O(versions × devices + devices² log devices).
    public func commonAncestry(of hashes: [ChangeHash]) -> CommonAncestry {
        let vectors = hashes.map { hash in
            guard let node = self[hash] else { preconditionFailure("no change \(hash.shortHex) in the graph") }
            return node.vector
        }
        guard var meet = vectors.first else { return CommonAncestry(vector: VersionVector(), heads: []) }
        for vector in vectors.dropFirst() { meet = meet.intersecting(vector) }
        // Each device's latest change inside the meet is a candidate; it is a head unless another contains it.
        let candidates = meet.entries.compactMap { nodes[ChangeID(device: $0.device, seq: $0.seq)] }
        let heads = candidates.filter { candidate in
            !candidates.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) }
        }
        return CommonAncestry(vector: meet, heads: Self.causalOrder(heads).map(\.hash))
    }

    /// Every change in a deterministic topological order: by lamport timestamp, then device.
    ///
    /// Valid because every change's lamport exceeds its parents' (``checkInvariants()`` checks it).
    /// - Complexity: O(n log n).
    public func topologicalOrder() -> [CausalNode] {
        Self.causalOrder(Array(nodes.values))
    }

    /// The changes that `vector` names, in topological order.
    ///
    /// - Complexity: O(n log n).
    public func changes(in vector: VersionVector) -> [CausalNode] {
        Self.causalOrder(nodes.values.filter { vector.contains($0.id) })
    }

    /// Checks that the graph is a well-formed history: every parent is present, precedes its child in vector and
    /// lamport order, each vector is its parents' merge plus the change itself, and each device's changes are
    /// numbered without gaps.
    ///
    /// - Returns: a description of the first problem found in causal order, or `nil`.
    public func firstInconsistency() -> String? {
        firstInconsistency(among: topologicalOrder())
    }

    /// Checks `nodes` of the graph as ``firstInconsistency()`` checks every node: a node's soundness depends only
    /// on itself and its parents, so a caller that checked the graph before adding `nodes` need check only them.
    ///
    /// - Parameter nodes: nodes of the graph, in causal order (as ``topologicalOrder()`` gives them).
    /// - Returns: a description of the first problem found among them, or `nil`.
    /// - Complexity: O(nodes × parents × devices).
    public func firstInconsistency(among nodes: [CausalNode]) -> String? {
        for node in nodes {
            var expected = VersionVector()
            var parentLamport: UInt64 = 0
            for parentHash in node.parents {
                guard let parent = self[parentHash] else {
                    return "\(node.id) names a parent \(parentHash.shortHex) that is not in the history"
                }
                guard parent.lamport < node.lamport else {
                    return
                        "\(node.id) has lamport \(node.lamport), not above its parent \(parent.id)'s \(parent.lamport)"
                }
                parentLamport = max(parentLamport, parent.lamport)
                expected.merge(parent.vector)
            }
            guard node.lamport <= ChangeLimits.maximumLamport(afterParentsAt: parentLamport) else {
                return
                    "\(node.id) has lamport \(node.lamport), more than \(ChangeLimits.lamportStep) above its parents' \(parentLamport)"
            }
            if node.id.seq > 1 {
                guard expected[node.id.device] == node.id.seq - 1 else {
                    return "\(node.id) was not made on its own device's previous change"
                }
            }
            expected.include(node.id)
            guard expected == node.vector else {
                return "\(node.id) has vector \(node.vector), but its parents give \(expected)"
            }
        }
        return nil
    }

    /// The nodes in a deterministic topological order: by lamport timestamp, then device (see
    /// ``topologicalOrder()``).
    public static func causalOrder(_ nodes: [CausalNode]) -> [CausalNode] {
        nodes.sorted { ($0.lamport, $0.id.device, $0.id.seq) < ($1.lamport, $1.id.device, $1.id.seq) }
    }

    /// Traps if ``firstInconsistency()`` finds a problem; tests call it after every mutation.
    public func checkInvariants() {
        if let problem = firstInconsistency() { preconditionFailure(problem) }
    }
}
