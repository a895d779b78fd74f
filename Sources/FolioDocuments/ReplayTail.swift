import FolioCore

/// The changes a replay read from the log (those after a checkpoint, within the heads' vectors, and the checkpoint's
/// latest change of each device), in causal order: in an array, so that a walk over them can keep each one's index
/// rather than the change, and its flags in arrays rather than in sets of hashes.
///
/// A change is found by hash first among the few changes just before the one that names it (a parent is earlier in
/// causal order, and in a history of a few devices typing it is a few changes earlier): only a lookup those miss
/// hashes every change, once.
///
/// A reference, used by one replay in one isolation: not `Sendable`.
final class ReplayTail {
    /// The changes, in causal order (by lamport timestamp, then identity).
    let changes: [Change]
    private var indexes: [ChangeHash: Int]?
    /// Where the last lookup by hash alone (``subscript(_:)``) found its change.
    private var cursor: Int

    /// How many changes before the one that names a change are compared with it before the index is.
    static var window: Int { 32 }

    /// The tail of `changes`, in causal order.
    init(_ changes: [Change]) {
        self.changes = changes
        cursor = changes.count
    }

    /// The number of changes.
    var count: Int { changes.count }

    /// The index of the change with this hash in ``changes``, if the tail holds it: looked for first among the
    /// changes just before `namer` (the index of a change that names it, or ``count``).
    func index(of hash: ChangeHash, before namer: Int) -> Int? {
        var probe = min(namer, changes.count) - 1
        let end = max(probe - Self.window, -1)
        while probe > end {
            if changes[probe].hash == hash { return probe }
            probe -= 1
        }
        if indexes == nil {
            var built: [ChangeHash: Int] = [:]
            built.reserveCapacity(changes.count)
            for (index, change) in changes.enumerated() { built[change.hash] = index }
            indexes = built
        }
        return indexes![hash]
    }

    /// The change with this hash, if the tail holds it: looked for first just before the last one found, as a walk
    /// back through the history looks changes up.
    subscript(hash: ChangeHash) -> Change? {
        guard let index = index(of: hash, before: cursor) else { return nil }
        cursor = index
        return changes[index]
    }
}
