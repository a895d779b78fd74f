import FolioCore
import Foundation
import GRDB
import GRDBSQLite

/// Which heads a local change is made on.
public enum ParentChoice: Hashable, Sendable {
    /// Every current head: the change sees everything in the log (it merges concurrent heads, if any).
    case allHeads
    /// These changes only, each of which must be in the log: for example the version a document shows, so that a
    /// change made on it never silently absorbs changes that arrived meanwhile (if one of them is no longer a head,
    /// the new change is concurrent with what was made on it since).
    case heads([ChangeHash])
}

extension ChangeLogStore {
    /// Appends one local change to `document`'s log.
    ///
    /// The store assigns the next sequence number of the local device, makes the change on the chosen heads
    /// (its parents), with their merged vectors as its context and a lamport timestamp above every change seen.
    /// When the call returns the change is committed.
    ///
    /// - Returns: the change as stored.
    /// - Throws: ``StoreError`` when the database fails (nothing is appended then), or `invalidChange` when a
    ///   named parent is not in the log.
    @discardableResult
    public func append(_ kind: ChangeKind, to document: DocumentID, on parents: ParentChoice = .allHeads)
        throws(StoreError)
        -> Change
    {
        try append([kind], to: document, on: parents)[0]
    }

    /// Appends local changes to `document`'s log in one transaction: all of them or none.
    ///
    /// The first change is made on `parents`, each later one on the one before it. Batching is much faster than
    /// appending one at a time, since a transaction's commit dominates the cost of a small change. The entries
    /// `localState` returns for the new changes (see ``LocalStateStore``) are written in the same transaction, so
    /// bookkeeping that names the changes (an undo stack) is never out of step with the log.
    ///
    /// A device's changes form one line (each sees the one before it, since a vector entry `device: n` names all of
    /// the device's first n changes), so a change is always made on its author's latest change too, which is
    /// added to `parents` when they do not already include it. A version concurrent with this device's own work
    /// (a file changed by another program, say) is therefore authored by another identity: `author`.
    ///
    /// - Parameters:
    ///   - kinds: what each change does, in order.
    ///   - document: the document whose log grows.
    ///   - parents: the heads the first change is made on.
    ///   - author: who makes the changes: the local device (the default), or another identity of this device's,
    ///     such as the one of `DeviceKey.externalKey`.
    ///   - blobs: the blobs each change refers to (`Change.blobs`), by position in `kinds`; empty (the default):
    ///     none.
    ///   - blobBytes: the bytes of the referred blobs the store may lack, stored in the same transaction (each
    ///     once); a blob referred to without its bytes (an unavailable one's placeholder, written again) stays
    ///     missing until a peer sends it.
    ///   - localState: the entries of this device's local state to write for the new changes, in the same
    ///     transaction; `nil` writes none.
    ///   - unpublished: whether the document is kept to this device from now on (`true`), published with its whole
    ///     history (`false`), or left as it is (`nil`, the default; see ``UnpublishedDocuments/documents()``), in
    ///     the same transaction: a document moved to the local container is unpublished with its move, so no sync can
    ///     send the move.
    /// - Returns: the changes as stored, in order.
    /// - Complexity: O(changes × devices).
    /// - Throws: ``StoreError`` when the database fails (nothing is appended then), or `invalidChange` when a
    ///   named parent is not in the log, `blobs` is neither empty nor one list per kind, or bytes in `blobBytes`
    ///   are not their reference's.
    @discardableResult
    public func append(
        _ kinds: [ChangeKind], to document: DocumentID, on parents: ParentChoice = .allHeads, author: Device? = nil,
        blobs: [[BlobReference]] = [], blobBytes: [BlobReference: Data] = [:],
        localState: (([Change]) -> [LocalStateKey: Data])? = nil, unpublished: Bool? = nil
    ) throws(StoreError) -> [Change] {
        guard blobs.isEmpty || blobs.count == kinds.count else {
            throw StoreError(
                .invalidChange, "\(blobs.count) lists of blobs were given for \(kinds.count) changes: one per change")
        }
        let device = author?.id ?? localDevice.id
        if let author, author.id != localDevice.id { try devices.register(author) }
        let (appended, documentRow) = try write("appending \(kinds.count) changes to document \(document)") { db in
            let documentRow = try insertingRowID(of: document, in: db)
            let deviceRow = try insertingRowID(of: device, in: db)
            var frontier = try self.frontier(of: documentRow, in: db)
            if let removed = try removedOwnHeads(of: documentRow, in: db)[device],
                removed.change.seq > frontier.vector[device]
            {
                throw StoreError(
                    .invalidChange,
                    "the changes \(device) made in document \(document) up to seq \(removed.change.seq) were removed with its local copy: they must come back from a peer before it makes new ones"
                )
            }
            var (heads, vector, parentLamport) = try base(
                for: parents, frontier: frontier, document: document, documentRow: documentRow, in: db)
            if let own = frontier.tips[device], vector[device] < own.seq {
                // The author's latest change is not in the chosen past: it joins the parents, and the parents it
                // already descends from leave.
                let latest =
                    try own.change
                    ?? fetchChange(document: document, documentRow: documentRow, device: device, seq: own.seq, in: db)
                var kept: [ChangeHash] = [latest.hash]
                for hash in heads {
                    guard let parent = try fetchChange(hash, document: document, documentRow: documentRow, in: db),
                        !latest.vector.contains(parent.id)
                    else { continue }
                    kept.append(hash)
                }
                heads = kept.sorted()
                vector.merge(latest.vector)
                parentLamport = max(parentLamport, latest.lamport)
            }
            let insert = try ChangeRowInserter(db)
            var appended: [Change] = []
            appended.reserveCapacity(kinds.count)
            for (index, kind) in kinds.enumerated() {
                let seq = frontier.vector[device] + 1
                // One above every timestamp seen, unless that runs further ahead of the parents than peers accept.
                let lamport =
                    min(frontier.maxLamport, ChangeLimits.maximumLamport(afterParentsAt: parentLamport) - 1) + 1
                guard seq <= ChangeLimits.counter, lamport <= ChangeLimits.counter, lamport > parentLamport else {
                    throw StoreError(
                        .invalidChange,
                        "document \(document) has used up its sequence numbers or lamport timestamps (the limit is \(ChangeLimits.counter)): no change can be added to it"
                    )
                }
                vector[device] = seq
                var body: [UInt8] = []
                let refers = blobs.isEmpty ? [] : Array(Set(blobs[index]))
                let change = Change(
                    document: document, id: ChangeID(device: device, seq: seq), parents: heads, vector: vector,
                    lamport: lamport, wallTime: clock.now(), kind: kind, blobs: refers, body: &body)
                try insert(
                    change, body: StorageCompression.packBody(body), documentRow: documentRow, deviceRow: deviceRow)
                keepDecoded(change, size: body.count, in: db)
                frontier.record(change, size: body.count, deviceRow: deviceRow)
                appended.append(change)
                heads = [change.hash]
                parentLamport = lamport
            }
            try save(&frontier, of: document, in: db)
            if !blobBytes.isEmpty {
                let referred = Set(appended.flatMap(\.blobs))
                try storeAppendedBlobs(blobBytes.filter { referred.contains($0.key) }, in: db)
            }
            if let localState { try LocalStateStore.write(localState(appended), documentRow: documentRow, in: db) }
            if let unpublished { try UnpublishedDocuments.write(unpublished, documentRow: documentRow, in: db) }
            return (appended, documentRow)
        }
        appendObservers.notify(document)
        foldIfDue([(documentRow, document, appended.count)])
        return appended
    }

    /// The parents, starting vector and highest parent lamport timestamp of a new change made on `parents`.
    private func base(
        for parents: ParentChoice, frontier: Frontier, document: DocumentID, documentRow: Int64, in db: Database
    ) throws -> ([ChangeHash], VersionVector, UInt64) {
        switch parents {
        case .allHeads:
            // The highest timestamp of the document is a head's.
            return (frontier.headHashes, frontier.vector, frontier.maxLamport)
        case .heads(let hashes):
            var vector = VersionVector()
            var lamport: UInt64 = 0
            for hash in Set(hashes).sorted() {
                // A parent is usually a device's latest change, which the frontier may hold decoded (this
                // transaction's too, which the store's memory does not have yet).
                guard
                    let parent = try frontier.keptChange(hash)
                        ?? fetchChange(hash, document: document, documentRow: documentRow, in: db)
                else {
                    throw StoreError(
                        .invalidChange,
                        "change \(hash.shortHex) is not in the log of document \(document), so no change can be made on it"
                    )
                }
                vector.merge(parent.vector)
                lamport = max(lamport, parent.lamport)
            }
            return (Set(hashes).sorted(), vector, lamport)
        }
    }
}

/// Inserts rows into the change table through one prepared statement, binding values with SQLite's C API.
///
/// This is the log's hot path: binding in place spares an argument array and a copy of each blob per row.
struct ChangeRowInserter {
    private let statement: Statement
    private let db: Database

    init(_ db: Database) throws {
        self.db = db
        statement = try db.cachedStatement(
            sql: """
                INSERT INTO change (document, device, seq, lamport, kind, hash_key, hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
    }

    /// Inserts `change`, whose canonical encoding, as kept at rest (see ``StorageCompression``), is `body`.
    func callAsFunction(_ change: Change, body: [UInt8], documentRow: Int64, deviceRow: Int64) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_bind_int64(handle, 1, documentRow)
        sqlite3_bind_int64(handle, 2, deviceRow)
        sqlite3_bind_int64(handle, 3, Int64(change.id.seq))
        sqlite3_bind_int64(handle, 4, Int64(change.lamport))
        sqlite3_bind_int64(handle, 5, Int64(change.kind.tag))
        sqlite3_bind_int64(handle, 6, change.hash.prefix64)
        // The blobs are bound without a copy (a nil destructor): they are only read by the step below.
        let code = change.hash.withUnsafeBytes { hash in
            body.withUnsafeBytes { body in
                sqlite3_bind_blob(handle, 7, hash.baseAddress, Int32(hash.count), nil)
                sqlite3_bind_blob(handle, 8, body.baseAddress, Int32(body.count), nil)
                defer { sqlite3_clear_bindings(handle) }
                return sqlite3_step(handle)
            }
        }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            let error = DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                sql: statement.sql)
            if error.resultCode == .SQLITE_CONSTRAINT {
                throw StoreError(.integrity, "change \(change.id) is already in the log", cause: error)
            }
            throw error
        }
        guard !change.blobs.isEmpty else { return }
        try BlobTables.create(in: db)
        let blobs = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO change_blob (hash, change, document, size) VALUES (?, ?, ?, ?)")
        let uncollect = try db.cachedStatement(sql: "DELETE FROM collected_blob WHERE hash = ?")
        for blob in change.blobs {
            try blobs.execute(arguments: [blob.hash.data, change.hash.data, documentRow, blob.size])
            // A blob let go that a new change refers to is needed again: missing until a peer sends it.
            try uncollect.execute(arguments: [blob.hash.data])
        }
    }
}
