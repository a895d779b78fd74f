import FolioCore
import FolioStore
import FolioTesting
import Foundation
import Testing

/// Identities and values shared by the sync tests.
enum Fixtures {
    /// The document most tests write to.
    static let document = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-000000000001")!)
    /// A second document.
    static let otherDocument = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-000000000002")!)
    /// A third document.
    static let thirdDocument = DocumentID(UUIDBytes("5f0c0000-0000-4000-8000-000000000003")!)

    /// The time every test clock starts at: 2026-01-01T00:00:00Z.
    static let start = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    /// An edit whose operations are `text`.
    static func edit(_ text: String) -> ChangeKind {
        .edit(Edit(operations: Data(text.utf8)))
    }
}

extension TemporaryDirectory {
    /// Opens (creating if needed) the store named after the device (`A.sqlite` for device "A").
    func openStore(for device: Device) throws -> ChangeLogStore {
        let store = try ChangeLogStore(
            at: file("\(device.name).sqlite"), device: device, clock: ManualClock(start: Fixtures.start))
        try store.checkInvariants()
        return store
    }
}

/// Checks that stores hold the same logs.
enum Convergence {
    /// What a store holds of every document: vector, head hashes and change hashes in causal order.
    struct Snapshot: Equatable, CustomStringConvertible {
        var documents: [DocumentID]
        var vectors: [VersionVector]
        var heads: [[ChangeHash]]
        var changes: [[ChangeHash]]
        var pending: Int

        var description: String {
            zip(documents, vectors).map { "\($0.0): \($0.1)" }.joined(separator: "; ") + " (\(pending) pending)"
        }
    }

    static func snapshot(_ store: ChangeLogStore) throws -> Snapshot {
        let documents = try store.documents()
        return Snapshot(
            documents: documents,
            vectors: try documents.map { try store.vector(of: $0) },
            heads: try documents.map { try store.heads(of: $0).map(\.hash) },
            changes: try documents.map { try store.changes(of: $0).map(\.hash) },
            pending: try documents.reduce(0) { $0 + (try store.pendingChanges(of: $1).count) })
    }

    /// Expects every store to hold the same documents, vectors, heads and changes, with nothing pending, and checks
    /// each store's invariants.
    static func expectConverged(
        _ stores: [ChangeLogStore], _ context: @autoclosure () -> String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let snapshots = try stores.map { store in
            try store.checkInvariants()
            return try snapshot(store)
        }
        for (index, snapshot) in snapshots.enumerated().dropFirst() {
            #expect(
                snapshot == snapshots[0], "\(context()) store \(index) differs: \(snapshot) vs \(snapshots[0])",
                sourceLocation: sourceLocation)
        }
        #expect(snapshots[0].pending == 0, "\(context()) changes still pending", sourceLocation: sourceLocation)
    }
}
