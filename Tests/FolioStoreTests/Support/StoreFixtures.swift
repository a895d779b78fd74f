import FolioCore
import FolioStore
import FolioTesting
import Foundation

/// Identities and values shared by the store tests.
enum Fixtures {
    /// The document most tests write to.
    static let document = DocumentID(UUIDBytes("0f0110d0-5704-4000-8000-000000000001")!)
    /// A second document.
    static let otherDocument = DocumentID(UUIDBytes("0f0110d0-5704-4000-8000-000000000002")!)
    /// A document no test writes to.
    static let unknownDocument = DocumentID(UUIDBytes("0f0110d0-5704-4000-8000-0000000000ff")!)

    /// The time every test clock starts at: 2026-01-01T00:00:00Z.
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    /// A fresh manual clock at ``start``.
    static func clock() -> ManualClock { ManualClock(start: start) }

    /// An edit whose operations are `text`.
    static func edit(_ text: String) -> ChangeKind {
        .edit(Edit(operations: Data(text.utf8)))
    }
}

extension TemporaryDirectory {
    /// Opens (creating if needed) the store file `name` in this directory as `device`, and checks its invariants
    /// (opening writes: it registers the device) unless `checked` is false, for a store damaged on purpose.
    func openStore(
        _ name: String, as device: Device, clock: ManualClock = Fixtures.clock(), durability: Durability = .normal,
        access: StoreAccess = .shared, checked: Bool = true
    ) throws -> ChangeLogStore {
        let store = try ChangeLogStore(
            at: file(name), device: device, clock: clock, durability: durability, access: access)
        if checked { try store.checkInvariants() }
        return store
    }

    /// Opens the store file named after the device (`A.sqlite` for device "A").
    func openStore(
        for device: Device, clock: ManualClock = Fixtures.clock(), durability: Durability = .normal,
        access: StoreAccess = .shared, checked: Bool = true
    ) throws -> ChangeLogStore {
        try openStore(
            "\(device.name).sqlite", as: device, clock: clock, durability: durability, access: access, checked: checked)
    }
}

extension ChangeLogStore {
    /// Sends `target` what it lacks of `document` from this store (a one-way sync), then checks `target`.
    @discardableResult
    func sync(_ document: DocumentID, to target: ChangeLogStore) throws -> IngestResult {
        let missing = try changes(of: document, since: target.vector(of: document))
        let result = try target.ingest(trusting: missing)
        try target.checkInvariants()
        return result
    }
}

/// Causal-order checks over lists of changes.
enum Causality {
    /// Whether every change in `changes` comes after the rest of its causal past, given that `before` names what was
    /// already there.
    static func isCausalOrder(_ changes: [Change], after before: VersionVector = VersionVector()) -> Bool {
        var seen = before
        for change in changes {
            for entry in change.vector.entries {
                let needed = entry.device == change.id.device ? entry.seq - 1 : entry.seq
                if seen[entry.device] < needed { return false }
            }
            seen.include(change.id)
        }
        return true
    }

    /// The changes of a complete history that no other change names as a parent, sorted by hash.
    static func headHashes(of changes: [Change]) -> [ChangeHash] {
        let parents = Set(changes.flatMap(\.parents))
        return changes.map(\.hash).filter { !parents.contains($0) }.sorted()
    }

    /// The merge of every change's vector.
    static func vector(of changes: [Change]) -> VersionVector {
        changes.reduce(VersionVector()) { $0.merging($1.vector) }
    }

    /// The deterministic causal order the store uses: lamport, then change identity.
    static func sorted(_ changes: [Change]) -> [Change] {
        changes.sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
    }
}

extension VersionVector {
    /// A vector from `device: seq` pairs; a concrete parameter type lets integer literals be sequence numbers.
    static func of(_ pairs: [(DeviceID, UInt64)]) -> VersionVector {
        VersionVector(pairs)
    }
}
