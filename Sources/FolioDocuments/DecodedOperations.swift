import DequeModule
import FolioCore

/// The operation groups of edits an open document's replays decoded lately, by change: a conflict's versions are
/// replayed from their edits, then merged from the same edits, and each group is decoded once. A change's bytes never
/// change, so a group never goes stale; the oldest groups go first once more than ``operationLimit`` operations are
/// held.
///
/// A reference owned by one document (its ``VersionTracking``) and used only in its isolation: not `Sendable`.
final class DecodedOperations {
    /// How many operations are kept at most, over all groups.
    static var operationLimit: Int { 50_000 }

    private var groups: [ChangeHash: (operations: Any, count: Int)] = [:]
    /// The groups' changes, oldest first (a deque: the oldest leaves at each eviction).
    private var order = Deque<ChangeHash>()
    private var held = 0

    /// The operations of `edit`, the edit of `change`, decoded as `Operation`s, the blobs it refers to read from
    /// `blobs(change)`; `nil` when they do not decode. A group with a blob the lookup lacked (read as its
    /// placeholder) is not kept, so that it reads whole once the blob arrives.
    ///
    /// - Complexity: O(1) when the group is held, otherwise its decoding.
    func operations<Operation: DocumentOperation>(
        of edit: Edit, in change: Change, as type: Operation.Type, blobs: (Change) -> BlobLookup?
    ) -> [Operation]? {
        if let group = groups[change.hash]?.operations as? [Operation] { return group }
        let lookup = blobs(change)
        guard let group = try? Operation.decodeGroup(edit.operations, blobs: lookup) else { return nil }
        if lookup?.missing.isEmpty ?? true { keep(group, count: group.count, for: change.hash) }
        return group
    }

    private func keep(_ group: Any, count: Int, for hash: ChangeHash) {
        guard count <= Self.operationLimit else { return }
        while held + count > Self.operationLimit, !order.isEmpty {
            let oldest = order.removeFirst()
            held -= groups.removeValue(forKey: oldest)?.count ?? 0
        }
        groups[hash] = (group, count)
        order.append(hash)
        held += count
    }
}
