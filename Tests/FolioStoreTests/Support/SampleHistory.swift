import FolioCore
import FolioStore
import FolioTesting
import Foundation

/// A small history made by three devices, each on its own store, exchanging changes by one-way syncs:
///
/// ```
/// A: a1 a2 ─────────── a3 ──────── a4 (merges a3, b2)
/// B:        └ b1 ───────── b2 (merges b1, c2) ── b3
/// C:  a1 ┘ c1 c2 ─────────┘            └─ a4 → c3
/// ```
///
/// `b1`, `c1…c2` and `a3` are concurrent; `b3` is concurrent with `a4` and `c3`, so the history ends with two heads
/// (`b3`, `c3`). Ten changes, made in the order of ``changes``.
struct SampleHistory {
    /// The document edited.
    let document: DocumentID
    /// The three devices.
    let a: Device, b: Device, c: Device
    /// Every change, in the order it was made.
    let changes: [Change]
    /// The changes by name: `a1`, `b2`, …
    let named: [String: Change]

    /// Makes the history in three stores in `directory` (`A.sqlite`, `B.sqlite`, `C.sqlite`), checking each store's
    /// invariants after every operation; the stores are closed afterwards.
    static func make(in directory: TemporaryDirectory, document: DocumentID = Fixtures.document) throws -> SampleHistory
    {
        let a = Device.named("A")
        let b = Device.named("B")
        let c = Device.named("C")
        let storeA = try directory.openStore(for: a)
        let storeB = try directory.openStore(for: b)
        let storeC = try directory.openStore(for: c)
        defer {
            try? storeA.close()
            try? storeB.close()
            try? storeC.close()
        }
        var made: [(String, Change)] = []
        func append(_ name: String, on store: ChangeLogStore) throws {
            let change = try store.append(Fixtures.edit(name), to: document)
            try store.checkInvariants()
            made.append((name, change))
        }

        try append("a1", on: storeA)
        try append("a2", on: storeA)
        try storeA.sync(document, to: storeB)
        try append("b1", on: storeB)
        // C has only seen a1.
        try storeC.ingest(trusting: storeA.changes(of: document).filter { $0.id.seq == 1 })
        try storeC.checkInvariants()
        try append("c1", on: storeC)
        try append("c2", on: storeC)
        try append("a3", on: storeA)
        try storeC.sync(document, to: storeB)
        try append("b2", on: storeB)
        try storeB.sync(document, to: storeA)
        try append("a4", on: storeA)
        try storeA.sync(document, to: storeC)
        try append("c3", on: storeC)
        try append("b3", on: storeB)

        return SampleHistory(
            document: document, a: a, b: b, c: c, changes: made.map(\.1),
            named: Dictionary(uniqueKeysWithValues: made))
    }

    /// The changes in the store's deterministic causal order (lamport, then identity).
    var causalOrder: [Change] { Causality.sorted(changes) }

    /// The change named `name`.
    subscript(name: String) -> Change { named[name]! }
}

/// What a store that is sent some changes should contain: the changes whose whole causal past was sent are applied,
/// the others wait.
struct DeliveryModel {
    private(set) var delivered: Set<ChangeHash> = []
    private(set) var applied: Set<ChangeHash> = []
    private(set) var vector = VersionVector()
    private var byHash: [ChangeHash: Change] = [:]

    /// Records a delivery and returns the changes it makes applicable, by hash.
    mutating func deliver(_ batch: [Change]) -> Set<ChangeHash> {
        for change in batch {
            delivered.insert(change.hash)
            byHash[change.hash] = change
        }
        var newlyApplied: Set<ChangeHash> = []
        var progressed = true
        while progressed {
            progressed = false
            for hash in delivered.subtracting(applied) {
                let change = byHash[hash]!
                let ready = change.vector.entries.allSatisfy { entry in
                    entry.device == change.id.device
                        ? vector[entry.device] == entry.seq - 1 : vector[entry.device] >= entry.seq
                }
                if ready {
                    applied.insert(hash)
                    newlyApplied.insert(hash)
                    vector.include(change.id)
                    progressed = true
                }
            }
        }
        return newlyApplied
    }

    /// The delivered changes still waiting for part of their causal past.
    var pending: Set<ChangeHash> { delivered.subtracting(applied) }
}
