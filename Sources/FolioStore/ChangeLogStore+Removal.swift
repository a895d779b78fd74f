import FolioCore
import Foundation
import GRDB

/// What ``ChangeLogStore/removeLocalCopy(of:)`` removed.
public struct DocumentRemoval: Hashable, Sendable {
    /// The document's changes that were in the log (rows and segments).
    public var changes = 0
    /// Its changes that waited for others.
    public var waiting = 0
    /// The blobs that went with it: those only its changes and checkpoints held.
    public var blobs = 0

    /// Creates an empty removal.
    public init() {}
}

extension ChangeLogStore {
    /// Removes the document's contents from this store, in one transaction: its log (rows and compact segments),
    /// its waiting changes, its signed heads, checkpoints, local state, sync cursors and unpublished mark, and the
    /// blobs nothing else refers to. What stays is the document's identity (a row that numbers it) and, while this
    /// device's own changes there are not back, a head of them (below). A sync that is granted the document again
    /// receives what its peer holds of it.
    ///
    /// This is not a deletion (which is a logged change that every device follows): nothing is sent, and what peers
    /// hold of the document stays with them. Changes of this device that no peer has are gone, and so is a document
    /// kept to this device (``unpublished``): nothing can bring it back. What a device does with a document it may
    /// no longer see (a share that ended), when its app chooses not to keep it.
    ///
    /// This device's own changes of a published document come back with it, as they were: the store keeps a head of
    /// each of its identities' latest change there, signed now, which vouches for them (and for nothing else in its
    /// names). Until they are back the store makes no change there (`invalidChange`), so that no sequence number of
    /// its is used twice; once a peer that announced the document gave all it has of it,
    /// ``settleRemovedOwnChanges(of:)`` lets it go on from the last that came back.
    ///
    /// - Returns: what was removed; nothing, for a document the store does not hold.
    /// - Throws: ``StoreError``; nothing is removed then.
    @discardableResult
    public func removeLocalCopy(of document: DocumentID) throws(StoreError) -> DocumentRemoval {
        let removal = try write("removing the local copy of \(document)") { db -> (DocumentRemoval, Int64?) in
            var removal = DocumentRemoval()
            guard let row = try rowID(of: document, in: db) else { return (removal, nil) }
            let arguments: StatementArguments = [row]
            removal.changes = try Self.count(sql: "SELECT count(*) FROM change WHERE document = ?", arguments, db)
            let segments = Self.segmentRange(of: row)
            removal.changes += try Self.count(
                sql: "SELECT coalesce(sum(count), 0) FROM segment WHERE id BETWEEN ? AND ?",
                [segments.lowerBound, segments.upperBound], db)
            removal.waiting = try Self.count(sql: "SELECT count(*) FROM pending WHERE document = ?", arguments, db)

            // The blobs its changes and checkpoints name, which may go once their rows have.
            var candidates: Set<Data> = []
            let hasBlobTables = try BlobTables.exist(in: db)
            if hasBlobTables {
                let referred = try Data.fetchAll(
                    db.cachedStatement(sql: "SELECT hash FROM change_blob WHERE document = ?"), arguments: arguments)
                candidates.formUnion(referred)
            }
            for checkpoint in try Row.fetchAll(
                db.cachedStatement(sql: "SELECT id, contents_hash, manifest_hash FROM checkpoint WHERE document = ?"),
                arguments: arguments)
            {
                let id: Int64 = checkpoint[0]
                candidates.insert(checkpoint[1])
                if let manifest = checkpoint[2] as Data? { candidates.insert(manifest) }
                candidates.formUnion(
                    try Data.fetchAll(
                        db.cachedStatement(sql: "SELECT hash FROM checkpoint_file WHERE checkpoint = ?"),
                        arguments: [id]))
            }

            // This device's own changes there may come back only as they were: a head of each identity's latest,
            // signed now, is what takes them back (an earlier removal's stays while its changes are not back).
            // A document kept to this device has no peer to bring them back: it is gone whole.
            let frontier = try self.frontier(of: row, in: db)
            let earlier = try removedOwnHeads(of: row, in: db)
            let kept =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM unpublished WHERE document = ?"), arguments: arguments)
                ?? false
            for identity in [key, externalKey] where !kept {
                guard let tip = frontier.tips[identity.id], tip.seq > earlier[identity.id]?.change.seq ?? 0 else {
                    continue
                }
                let head = SignedHead(
                    document: document, change: ChangeID(device: identity.id, seq: tip.seq), hash: tip.hash,
                    signedWith: identity)
                try RemovedOwnHeadTable.create(in: db)
                try db.cachedStatement(
                    sql: "INSERT OR REPLACE INTO removed_own_head (document, device, head) VALUES (?, ?, ?)"
                ).execute(arguments: [row, try insertingRowID(of: identity.id, in: db), Data(head.encoded())])
                db.afterNextTransaction { _ in self.mayHaveRemovedOwnHeads.store(true, ordering: .relaxed) }
            }

            // Rows of a log leave only for a segment (the change table's trigger), unless every one of them is
            // marked folded: the whole document goes, segments with it.
            try db.cachedStatement(sql: "UPDATE frontier SET folded = 9223372036854775807 WHERE document = ?")
                .execute(arguments: arguments)
            for sql in [
                "DELETE FROM change WHERE document = ?",
                "DELETE FROM pending WHERE document = ?",
                "DELETE FROM frontier WHERE document = ?",
                "DELETE FROM device_head WHERE document = ?",
                "DELETE FROM checkpoint_file WHERE checkpoint IN (SELECT id FROM checkpoint WHERE document = ?)",
                "DELETE FROM checkpoint WHERE document = ?",
                "DELETE FROM local_state WHERE document = ?",
                "DELETE FROM sync_cursor WHERE document = ?",
                "DELETE FROM unpublished WHERE document = ?",
                // The triggers of the pending table keep its unvouched counts; the count of waiting changes is kept
                // by hand.
                "UPDATE document SET waiting = 0 WHERE id = ?",
            ] {
                try db.cachedStatement(sql: sql).execute(arguments: arguments)
            }
            // The segments' numbers are not used again (a reader's cache knows segments by id).
            try db.cachedStatement(
                sql: """
                    UPDATE document SET segment_floor = max(segment_floor,
                        coalesce((SELECT max(id) FROM segment WHERE id BETWEEN ?1 AND ?2), 0) & 4294967295)
                    WHERE id = ?3
                    """
            ).execute(arguments: [segments.lowerBound, segments.upperBound, row])
            try db.cachedStatement(sql: "DELETE FROM segment WHERE id BETWEEN ? AND ?")
                .execute(arguments: [segments.lowerBound, segments.upperBound])
            if hasBlobTables {
                try db.cachedStatement(sql: "DELETE FROM change_blob WHERE document = ?").execute(arguments: arguments)
            }

            // A blob goes when no change and no checkpoint of any document names it any more; a blob let go
            // (`collectBlobs(of:)`) that nothing names is forgotten too.
            let stillNamed = try db.cachedStatement(
                sql: """
                    SELECT 1 FROM checkpoint_file WHERE hash = ?1
                    UNION ALL SELECT 1 FROM checkpoint WHERE contents_hash = ?1 OR manifest_hash = ?1
                    \(hasBlobTables ? "UNION ALL SELECT 1 FROM change_blob WHERE hash = ?1" : "")
                    LIMIT 1
                    """)
            for hash in candidates.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard try Bool.fetchOne(stillNamed, arguments: [hash]) != true else { continue }
                try db.cachedStatement(sql: "DELETE FROM blob WHERE hash = ?").execute(arguments: [hash])
                removal.blobs += db.changesCount
                if hasBlobTables {
                    try db.cachedStatement(sql: "DELETE FROM collected_blob WHERE hash = ?").execute(arguments: [hash])
                }
            }
            exclusiveCache?.stageRemoval(of: row, document: document, in: db)
            return (removal, row)
        }
        guard let row = removal.1 else { return removal.0 }
        segmentCache.forget(row)
        foldCounters.reset(row)
        signedTips.withLock { $0[document] = nil }
        return removal.0
    }

    /// The documents whose local copy was removed while they held changes of this device's, and whose changes of
    /// this device's are not all back (see ``removeLocalCopy(of:)``), in identity order.
    ///
    /// - Throws: ``StoreError``.
    public func documentsAwaitingOwnChanges() throws(StoreError) -> [DocumentID] {
        guard mayHaveRemovedOwnHeads.load(ordering: .relaxed) else { return [] }
        return try read("reading the documents whose own changes were removed") { db in
            guard try RemovedOwnHeadTable.exists(in: db) else { return [] }
            return try Data.fetchAll(
                db,
                sql: "SELECT DISTINCT d.uuid FROM removed_own_head r JOIN document d ON d.id = r.document"
            ).map { DocumentID(try ColumnDecoder.uuid($0)) }.sorted()
        }
    }

    /// Stops waiting for this device's removed changes of `document` beyond those that came back. What a sync calls
    /// once a peer that announced the document gave all it announced of it: the changes that did not come back
    /// reached no peer that gave it back (made after the device lost access, say), and this device's next change
    /// there takes the sequence number after the last that did.
    ///
    /// Call it only for such a document, after such a sync: a sync that did not hear the document announced, or a
    /// peer that never holds this device's changes (a folder it has not read its own files from), does not say that
    /// they are gone, and a change made after settling too early takes a sequence number a peer already holds
    /// under another change (which peers then refuse).
    ///
    /// Nothing is done while the document has no log on this device (nothing came back yet) or while changes of
    /// this device's that a head of its own vouches for wait in it (their dependencies are still to come). Changes
    /// in its names that nothing it signed vouches for are dropped: they are not its own.
    ///
    /// - Returns: whether the document was settled.
    /// - Throws: ``StoreError``.
    @discardableResult
    public func settleRemovedOwnChanges(of document: DocumentID) throws(StoreError) -> Bool {
        guard mayHaveRemovedOwnHeads.load(ordering: .relaxed) else { return false }
        return try write("settling the removed changes of \(document)") { db in
            guard let row = try rowID(of: document, in: db), try !removedOwnHeads(of: row, in: db).isEmpty,
                try !self.frontier(of: row, in: db).tips.isEmpty
            else { return false }
            var dropped = 0
            for identity in [key.id, externalKey.id] {
                guard let deviceRow = try rowID(of: identity, in: db) else { continue }
                let waits = try Bool.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT 1 FROM pending WHERE document = ? AND device = ? AND vouched <> 0 LIMIT 1"),
                    arguments: [row, deviceRow])
                if waits == true { return false }
                try db.cachedStatement(sql: "DELETE FROM pending WHERE document = ? AND device = ? AND vouched = 0")
                    .execute(arguments: [row, deviceRow])
                dropped += db.changesCount
            }
            try forgetWaiting([row: dropped], in: db)
            try db.cachedStatement(sql: "DELETE FROM removed_own_head WHERE document = ?").execute(arguments: [row])
            try noteRemovedOwnHeadsMayBeGone(in: db)
            return true
        }
    }

    /// The heads of this device's identities' latest changes in the document of `documentRow` when its local copy
    /// was removed, for the identities whose changes there are not all back yet (see ``removeLocalCopy(of:)``).
    func removedOwnHeads(of documentRow: Int64, in db: Database) throws -> [DeviceID: SignedHead] {
        guard mayHaveRemovedOwnHeads.load(ordering: .relaxed), try RemovedOwnHeadTable.exists(in: db) else {
            return [:]
        }
        var heads: [DeviceID: SignedHead] = [:]
        for bytes in try Data.fetchAll(
            db.cachedStatement(sql: "SELECT head FROM removed_own_head WHERE document = ?"), arguments: [documentRow])
        {
            guard let head = try? SignedHead(decoding: [UInt8](bytes)), head.isAuthentic else {
                throw StoreError(.corrupt, "a head kept for a removed document does not decode or check")
            }
            heads[head.change.device] = head
        }
        return heads
    }

    /// Forgets the heads of `heads` whose changes are all back in the log of `documentRow` (`frontier`), once the
    /// log holds each head's own change (`storedHash`); one that holds another change under its identity throws
    /// `integrity` (the identity's key signed two changes under one identity).
    func forgetRemovedOwnHeads(
        _ heads: [DeviceID: SignedHead], reachedBy frontier: Frontier, documentRow: Int64, in db: Database,
        storedHash: (ChangeID) throws -> ChangeHash?
    ) throws {
        var forgot = false
        for (device, head) in heads.sorted(by: { $0.key < $1.key }) where frontier.vector[device] >= head.change.seq {
            guard let stored = try storedHash(head.change), stored == head.hash else {
                throw StoreError(
                    .integrity,
                    "device \(device) signed change \(head.change.seq) with hash \(head.hash.shortHex) when the document's local copy was removed, but the log now has another change under that identity: the device's key is used by two devices (a cloned or restored device); nothing was overwritten"
                )
            }
            guard let deviceRow = try rowID(of: device, in: db) else { continue }
            try db.cachedStatement(sql: "DELETE FROM removed_own_head WHERE document = ? AND device = ?")
                .execute(arguments: [documentRow, deviceRow])
            forgot = true
        }
        if forgot { try noteRemovedOwnHeadsMayBeGone(in: db) }
    }

    /// With exclusive access, clears ``mayHaveRemovedOwnHeads`` once the transaction of `db` commits, when it leaves
    /// no record: an ingest or an append then asks the table nothing again.
    private func noteRemovedOwnHeadsMayBeGone(in db: Database) throws {
        guard exclusiveCache != nil, try !RemovedOwnHeadTable.holdsAny(in: db) else { return }
        db.afterNextTransaction { _ in self.mayHaveRemovedOwnHeads.store(false, ordering: .relaxed) }
    }

    private static func count(sql: String, _ arguments: StatementArguments, _ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
    }
}
