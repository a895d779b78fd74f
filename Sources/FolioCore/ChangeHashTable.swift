/// The positions of a list's changes, found by hash: an open-addressed table keyed by the first eight bytes of each
/// hash (SHA-256, so spread evenly), each slot a position in the list that a lookup checks against the whole hash.
///
/// Built in one pass, at two slots a change; a lookup compares a few integers and one hash, and touches no change but
/// the one it finds. A hash the list repeats maps to its last position, as a dictionary filled in order would.
package struct ChangeHashTable: Sendable {
    /// Per slot, the position of a change plus one, or 0 when the slot is empty.
    private var slots: [Int]
    /// Per slot, the key of its change's hash (the first eight bytes).
    private var keys: [Int64]
    private let mask: Int

    /// The table of `changes`.
    package init(_ changes: [Change]) {
        self.init(count: changes.count) { changes[$0].hash }
    }

    /// The position in `changes` (the list the table was built from) of the change with this hash, if it has one.
    package func index(of hash: ChangeHash, in changes: [Change]) -> Int? {
        index(of: hash) { changes[$0].hash }
    }

    /// The table of `count` positions whose hashes `hashAt` gives.
    package init(count: Int, hashAt: (Int) -> ChangeHash) {
        var capacity = 16
        while capacity < 2 * count { capacity &<<= 1 }
        mask = capacity - 1
        slots = [Int](repeating: 0, count: capacity)
        keys = [Int64](repeating: 0, count: capacity)
        for position in 0..<count {
            let hash = hashAt(position)
            let key = hash.prefix64
            var slot = Int(truncatingIfNeeded: key) & mask
            while slots[slot] != 0 {
                if keys[slot] == key, hashAt(slots[slot] - 1) == hash { break }
                slot = (slot + 1) & mask
            }
            slots[slot] = position + 1
            keys[slot] = key
        }
    }

    /// The position of the hash `hash`, where `hashAt` gives the hash at each position the table was built from.
    package func index(of hash: ChangeHash, hashAt: (Int) -> ChangeHash) -> Int? {
        let key = hash.prefix64
        var slot = Int(truncatingIfNeeded: key) & mask
        while slots[slot] != 0 {
            if keys[slot] == key, hashAt(slots[slot] - 1) == hash { return slots[slot] - 1 }
            slot = (slot + 1) & mask
        }
        return nil
    }
}
