/// The positions of a list's changes, found by hash: an open-addressed table keyed by the first eight bytes of each
/// hash, each slot a position in the list that a lookup checks against the whole hash.
///
/// Built in one pass, at two to four slots a change; a lookup compares a few integers, and the hashes of the changes
/// whose key is the one looked for (almost always the one it finds). A hash the list repeats maps to its last
/// position, as a dictionary filled in order would.
///
/// Hashes come from peers, who could choose changes whose keys fill one stretch of the table (grinding SHA-256 for a
/// dozen bits is cheap) and make every lookup scan it: a key's slot is the high bits of its product with an odd
/// number drawn at random once per process, which a peer cannot know.
package struct ChangeHashTable: Sendable {
    /// The odd multiplier that spreads keys over slots.
    private static let multiplier = UInt64.random(in: 0...UInt64.max) | 1
    /// Per slot, the position of a change plus one, or 0 when the slot is empty.
    private var slots: [Int]
    /// Per slot, the key of its change's hash (the first eight bytes).
    private var keys: [Int64]
    private let mask: Int
    /// How far a key's product is shifted right to give its slot: 64 minus the bits of a slot's number.
    private let shift: UInt64

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
        var bits: UInt64 = 4
        while 1 << bits < 2 * count { bits += 1 }
        let capacity = 1 << bits
        mask = capacity - 1
        shift = 64 - bits
        slots = [Int](repeating: 0, count: capacity)
        keys = [Int64](repeating: 0, count: capacity)
        for position in 0..<count {
            let hash = hashAt(position)
            let key = hash.prefix64
            var slot = self.slot(of: key)
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
        var slot = slot(of: key)
        while slots[slot] != 0 {
            if keys[slot] == key, hashAt(slots[slot] - 1) == hash { return slots[slot] - 1 }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// The first slot of `key`.
    private func slot(of key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* Self.multiplier) &>> shift) & mask
    }
}
