import FolioCore
import Foundation
import GRDB

/// One document's share of an ingest, inside the caller's transaction.
struct Ingestion {
    let store: ChangeLogStore
    let document: DocumentID
    let db: Database
    let documentRow: Int64
    /// The document's frontier with the changes staged so far (see ``staged``): what readiness is judged against.
    var frontier: Frontier
    /// The frontier as the log has it before this ingestion writes anything.
    let frontierBefore: Frontier
    let insert: ChangeRowInserter
    /// The identities only this device makes changes as: its own and its external identity (``DeviceKey/externalKey``).
    let localIdentities: [DeviceID]
    /// Of those, the ones whose changes of the document were removed with its local copy and are not all back: the
    /// head of each one's latest change there, signed at the removal (``ChangeLogStore/removeLocalCopy(of:)``).
    let removedOwn: [DeviceID: SignedHead]
    /// Changes staged in this transaction, by hash: parents are usually among them, which spares a lookup.
    var appliedNow: [ChangeHash: Change] = [:]
    /// The changes found ready and vouched for, in the (causal) order they were found so, with the head that names
    /// each, if any: written to the log by ``commitStaged(into:)`` when a head that enters the log with them
    /// reaches them, held in the pending table otherwise (see ``writable()``).
    var staged: [(encoded: EncodedChange, head: SignedHead?, deviceRow: Int64, incoming: Bool)] = []
    /// The hashes of the staged changes, by identity.
    var stagedHashes: [ChangeID: ChangeHash] = [:]
    /// Devices whose changes were applied by this ingestion and whose waiting dependants are not yet re-examined.
    var advanced: Set<DeviceID> = []
    /// Whether changes of the document wait in the pending table, when this ingestion learnt it (`nil`: as before).
    var hasWaiting: Bool?
    /// How many changes of the document wait, once read (when the first change of this call had to wait), and how
    /// many this ingestion parked and removed since: written back with the frontier.
    var waitingCount: Int?
    var waitingDelta = 0
    /// Whether this ingestion removed waiting changes, and the hashes of those another change's identity dropped.
    var removedWaiting = false
    var dropped: Set<Data> = []
    /// Whether the caller vouches for every change itself (``ChangeLogStore/ingest(trusting:)``).
    let trusted: Bool
    /// The incoming changes that a signed head reaches, and the heads that name incoming changes, by hash.
    var vouched: Set<ChangeHash> = []
    var headsByHash: [ChangeHash: SignedHead] = [:]
    /// How many changes of the document wait for a head, once read (when this ingestion first parks one).
    var unvouchedCount: Int?
    /// The arrival time of the changes this ingestion parks, in milliseconds since 1970.
    let now: Int64

    init(store: ChangeLogStore, document: DocumentID, db: Database, trusted: Bool, now: Int64) throws {
        self.store = store
        self.now = now
        self.trusted = trusted
        self.document = document
        self.db = db
        documentRow = try store.insertingRowID(of: document, in: db)
        frontier = try store.frontier(of: documentRow, in: db)
        frontierBefore = frontier
        insert = try ChangeRowInserter(db)
        // A store with shared access reads the document's count once, so that an ingest into a document with none
        // waiting asks the pending table nothing (an exclusive store remembers whether any wait).
        if store.exclusiveCache == nil {
            waitingCount =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT waiting FROM document WHERE id = ?"), arguments: [documentRow]) ?? 0
        }
        localIdentities = [store.localDevice.id, store.externalKey.id]
        removedOwn = try store.removedOwnHeads(of: documentRow, in: db)
    }

    mutating func ingest(_ incoming: [EncodedChange], into result: inout IngestResult) throws {
        let appliedBefore = result.applied.count
        defer { if result.applied.count > appliedBefore { result.updatedDocuments.append(document) } }
        for encoded in incoming {
            let change = encoded.change
            try validateRanges(change)
            if change.id.seq <= frontier.vector[change.id.device] {
                let stored = try storedHash(of: change.id)
                if stored != change.hash {
                    if trusted { throw StoreError.identityReused(change, storedHash: stored, where: "in the log") }
                    // Another change under a logged identity, which no head can vouch for (its device signed the
                    // logged one, or a signed head naming this one made `vouch` throw): made up, so dropped.
                    result.rejected.append(
                        (
                            change.id,
                            "device \(change.id.device) seq \(change.id.seq) is in the log with another hash, and nothing its device signed vouches for this one"
                        ))
                    continue
                }
                result.duplicates += 1
                continue
            }
            try refuseLocalIdentity(change)
            guard trusted || vouched.contains(change.hash) else {
                // Nothing vouches for it yet: it waits for a head, as if for its own arrival.
                switch try park(encoded, waitingFor: change.id, vouched: false, into: &result) {
                case .parked:
                    result.unvouched.append(change.id)
                    hasWaiting = true
                case .alreadyWaiting:
                    result.duplicates += 1
                case .full:
                    result.turnedAway.append(change.id)
                }
                continue
            }
            if let dependency = try missingDependency(of: change, into: &result) {
                switch try park(encoded, waitingFor: dependency, vouched: true, into: &result) {
                case .parked:
                    result.deferred += 1
                    hasWaiting = true
                case .alreadyWaiting:
                    result.duplicates += 1
                case .full:
                    result.turnedAway.append(change.id)
                }
            } else {
                try stage(encoded, head: headsByHash[change.hash], incoming: true)
            }
        }
        if !advanced.isEmpty && mayHaveWaiting { try drainPending(into: &result) }
        try commitStaged(into: &result)
        if waitingDelta != 0 {
            try db.cachedStatement(sql: "UPDATE document SET waiting = max(0, waiting + ?) WHERE id = ?")
                .execute(arguments: [waitingDelta, documentRow])
        }
        try store.save(&frontier, of: document, hasWaiting: hasWaiting, in: db)
        if !removedOwn.isEmpty {
            try store.forgetRemovedOwnHeads(removedOwn, reachedBy: frontier, documentRow: documentRow, in: db) {
                try storedHash(of: $0)
            }
        }
    }

    /// Whether changes of the document may wait in the pending table: an exclusive store remembers whether they do
    /// (a document it does not know has none), a shared one reads the document's count, so that an ingest into a
    /// document with none waiting costs no query of the table.
    var mayHaveWaiting: Bool {
        if hasWaiting == true || waitingDelta > 0 { return true }
        if let exclusiveCache = store.exclusiveCache {
            return exclusiveCache.document(documentRow)?.hasWaiting ?? false
        }
        return (waitingCount ?? 1) + waitingDelta > 0
    }

    /// The hash of the logged change with this identity (`nil` if the row is missing or its hash unreadable).
    func storedHash(of id: ChangeID) throws -> ChangeHash? {
        if let staged = stagedHashes[id] { return staged }
        // A duplicate of a device's latest change (a message delivered twice, usually) is checked against the frontier.
        if let tip = frontier.tips[id.device], tip.seq == id.seq { return tip.hash }
        guard let deviceRow = try store.rowID(of: id.device, in: db) else { return nil }
        // The statement the store's lookups by seq use (one fewer to prepare per connection); the body is left unread.
        let stored = try Data.fetchOne(
            db.cachedStatement(sql: ChangeLogStore.changeBySeq), arguments: [documentRow, deviceRow, Int64(id.seq)])
        if let stored { return try? ColumnDecoder.changeHash(stored) }
        return try store.segments(of: document, documentRow: documentRow, in: db).change(id)?.hash
    }
}
