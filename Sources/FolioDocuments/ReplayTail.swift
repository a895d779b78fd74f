import FolioCore

/// The changes a replay read from the log (those after a checkpoint, within the heads' vectors), in causal order: in
/// an array, so that a walk over them can keep each one's index rather than the change, and its flags in arrays
/// rather than in sets of hashes.
///
/// A change is found by hash first among the few changes just before the one that names it (a parent is earlier in
/// causal order, and in a history of a few devices typing it is a few changes earlier); the first few lookups that
/// miss there read every change's key, and the rest use a table of every change's hash (``ChangeHashTable``), built
/// by the first of them. A replay that misses only a few times (a long history of two devices) never builds the table,
/// which costs about as much as a hundred reads of the keys and a few hundred kilobytes of fresh memory.
///
/// A reference, used by one replay in one isolation: not `Sendable`.
final class ReplayTail {
    /// The changes, in causal order (by lamport timestamp, then identity).
    let changes: [Change]
    /// The first eight bytes of each change's hash, which the changes near a lookup are compared by first.
    private let keys: [Int64]
    private var table: ChangeHashTable?
    /// Where the last lookup by hash alone (``subscript(_:)``) found its change.
    private var cursor: Int
    /// How many more lookups that miss the nearby changes read every key rather than build the table.
    private var scansLeft = ReplayTail.scans

    /// How many changes before the one that names a change are compared with it before a scan or the table.
    static var window: Int { 32 }

    /// How many lookups that miss the nearby changes read every key before the table is built.
    static var scans: Int { 16 }

    /// The tail of `changes`, in causal order.
    init(_ changes: [Change]) {
        self.changes = changes
        keys = changes.map(\.hash.prefix64)
        cursor = changes.count
    }

    /// The number of changes.
    var count: Int { changes.count }

    /// The index of the change with this hash in ``changes``, if the tail holds it: looked for first among the
    /// changes just before `namer` (the index of a change that names it, or ``count``).
    func index(of hash: ChangeHash, before namer: Int) -> Int? {
        nearbyIndex(of: hash, before: namer) ?? indexed(hash)
    }

    /// The index of the change with this hash among the ``window`` changes before `namer`, if one of them has it.
    func nearbyIndex(of hash: ChangeHash, before namer: Int) -> Int? {
        let last = min(namer, changes.count) - 1
        return scan(for: hash, from: last, downTo: max(last - Self.window + 1, 0))
    }

    /// The index of the change with this hash among those from `last` down to `first`, latest first: a hash the
    /// list repeats is found at its last position there, as the table finds it.
    private func scan(for hash: ChangeHash, from last: Int, downTo first: Int) -> Int? {
        let key = hash.prefix64
        var probe = last
        while probe >= first {
            if keys[probe] == key, changes[probe].hash == hash { return probe }
            probe -= 1
        }
        return nil
    }

    /// The index of the change with this hash: found by reading every key, latest first, for the first ``scans``
    /// calls, then by the table of every change's hash (built on the next call).
    private func indexed(_ hash: ChangeHash) -> Int? {
        if table == nil, scansLeft > 0 {
            scansLeft -= 1
            return scan(for: hash, from: changes.count - 1, downTo: 0)
        }
        if table == nil { table = ChangeHashTable(changes) }
        return table!.index(of: hash, in: changes)
    }

    /// The change with this hash, if the tail holds it: looked for first just before the last one found, as a walk
    /// back through the history looks changes up.
    subscript(hash: ChangeHash) -> Change? {
        guard let index = index(of: hash, before: cursor) else { return nil }
        cursor = index
        return changes[index]
    }
}
