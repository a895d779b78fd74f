import FolioCore

/// The changes a replay read from the log (those after a checkpoint, within the heads' vectors): in an array, and
/// by hash, so that a walk over them can keep each one's index rather than the change, and its flags in arrays
/// rather than in sets of hashes.
struct ReplayTail {
    /// The changes, in the order they were read.
    let changes: [Change]
    private let indexes: [ChangeHash: Int]

    /// The tail of `changes`, which name each change once.
    init(_ changes: [Change]) {
        self.changes = changes
        var indexes: [ChangeHash: Int] = [:]
        indexes.reserveCapacity(changes.count)
        for (index, change) in changes.enumerated() { indexes[change.hash] = index }
        self.indexes = indexes
    }

    /// The number of changes.
    var count: Int { changes.count }

    /// The index of the change with this hash in ``changes``, if the tail holds it.
    func index(of hash: ChangeHash) -> Int? { indexes[hash] }

    /// The change with this hash, if the tail holds it.
    subscript(hash: ChangeHash) -> Change? { indexes[hash].map { changes[$0] } }
}
