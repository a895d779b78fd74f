import FolioCore
import Foundation
import GRDB

/// What an ``ChangeLogStore/ingest(_:)`` call did.
public struct IngestResult: Hashable, Sendable {
    /// The changes that entered the log, in the order they were applied (a causal order), including earlier pending
    /// changes that the new ones made ready.
    public var applied: [ChangeID] = []
    /// Changes that were already in the log or already waiting: ignored.
    public var duplicates = 0
    /// Changes of this call that arrived before their dependencies and now wait in the pending table.
    public var deferred = 0
    /// Changes that waited in the pending table and, once their dependencies arrived, proved invalid (bad parents
    /// or timestamps): dropped from the pending table, with the reason, so that they cannot block the document.
    public var rejected: [(id: ChangeID, reason: String)] = []
    /// The documents whose logs grew (changes of theirs were applied), in identity order.
    public var updatedDocuments: [DocumentID] = []

    /// Equal when the same changes were applied, ignored, deferred and rejected.
    public static func == (lhs: IngestResult, rhs: IngestResult) -> Bool {
        lhs.applied == rhs.applied && lhs.duplicates == rhs.duplicates && lhs.deferred == rhs.deferred
            && lhs.rejected.map(\.id) == rhs.rejected.map(\.id) && lhs.rejected.map(\.reason) == rhs.rejected.map(\.reason)
            && lhs.updatedDocuments == rhs.updatedDocuments
    }

    /// Hashes what was applied and rejected.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(applied)
        hasher.combine(updatedDocuments)
        hasher.combine(duplicates)
        hasher.combine(deferred)
        hasher.combine(rejected.map(\.id))
    }

    /// Creates an empty result.
    public init() {}
}

extension ChangeLogStore {
    /// Adds changes from peers, in any order, idempotently.
    ///
    /// A change enters the log only after everything in its vector; one that arrives early waits in the pending
    /// table (never lost) and is applied by the call that brings its last dependency. A change already present is
    /// ignored. Each applied change is checked: its parents must be in its causal past with lower lamport
    /// timestamps. A waiting change that fails that check when it becomes ready is dropped and reported in
    /// ``IngestResult/rejected``. All of it happens in one transaction: when an error is thrown, nothing was applied.
    ///
    /// - Throws: ``StoreError`` with code `integrity` when a change has the identity of a stored or waiting change
    ///   but another hash (the error names the device and seq; nothing is overwritten), `invalidChange` when a
    ///   change's parents or timestamps cannot be right, or `database`.
    /// - Complexity: O(changes × (parents × log n + devices)), plus the pending changes re-examined.
    @discardableResult
    public func ingest(_ changes: [Change]) throws(StoreError) -> IngestResult {
        try ingest(encoded: changes.map(EncodedChange.init))
    }

    /// Adds changes from peers as they arrived, with their encodings, sparing a second encoding; otherwise the same
    /// as ``ingest(_:)``.
    ///
    /// - Throws: ``StoreError``, as ``ingest(_:)``.
    @discardableResult
    public func ingest(encoded changes: [EncodedChange]) throws(StoreError) -> IngestResult {
        guard !changes.isEmpty else { return IngestResult() }
        let byDocument = Dictionary(grouping: changes, by: \.change.document)
        return try write("ingesting \(changes.count) changes") { db in
            var result = IngestResult()
            for document in byDocument.keys.sorted() {
                let incoming = byDocument[document]!.sorted {
                    ($0.change.lamport, $0.change.id) < ($1.change.lamport, $1.change.id)
                }
                var ingestion = try Ingestion(store: self, document: document, db: db)
                try ingestion.ingest(incoming, into: &result)
            }
            return result
        }
    }
}

/// One document's share of an ingest, inside the caller's transaction.
private struct Ingestion {
    let store: ChangeLogStore
    let document: DocumentID
    let db: Database
    let documentRow: Int64
    var frontier: Frontier
    let insert: ChangeRowInserter
    /// Changes applied in this transaction, by hash: parents are usually among them, which spares a lookup.
    var appliedNow: [ChangeHash: (id: ChangeID, lamport: UInt64)] = [:]
    /// Whether changes of the document wait in the pending table, when this ingestion learnt it (`nil`: as before).
    var hasWaiting: Bool?

    init(store: ChangeLogStore, document: DocumentID, db: Database) throws {
        self.store = store
        self.document = document
        self.db = db
        documentRow = try store.rowID(of: document, in: db, create: true)!
        frontier = try store.frontier(of: documentRow, in: db)
        insert = try ChangeRowInserter(db)
    }

    mutating func ingest(_ incoming: [EncodedChange], into result: inout IngestResult) throws {
        let appliedBefore = result.applied.count
        defer { if result.applied.count > appliedBefore { result.updatedDocuments.append(document) } }
        var appliedAny = false
        for encoded in incoming {
            let change = encoded.change
            try validateRanges(change)
            if change.id.seq <= frontier.vector[change.id.device] {
                try checkSameAsStored(change)
                result.duplicates += 1
            } else if isReady(change) {
                try apply(encoded, into: &result)
                appliedAny = true
            } else if try park(encoded) {
                result.deferred += 1
                hasWaiting = true
            } else {
                result.duplicates += 1
            }
        }
        if appliedAny && mayHaveWaiting { try drainPending(into: &result) }
        try store.save(&frontier, of: document, hasWaiting: hasWaiting, in: db)
    }

    /// Whether changes of the document may wait in the pending table: an exclusive store remembers whether they do
    /// (a document it does not know has none), so that an ingest into a document with none waiting costs no query.
    private var mayHaveWaiting: Bool {
        guard hasWaiting != true, let memory = store.memory else { return true }
        return memory.document(documentRow)?.hasWaiting ?? false
    }

    /// Values the store keeps as signed 64-bit integers must fit them.
    private func validateRanges(_ change: Change) throws {
        guard change.id.seq <= UInt64(Int64.max), change.lamport <= UInt64(Int64.max) else {
            throw StoreError(.invalidChange, "change \(change.id) has a sequence number or lamport timestamp beyond 2^63")
        }
    }

    /// Whether everything in the change's vector, but the change itself, is in the log.
    private func isReady(_ change: Change) -> Bool {
        guard change.id.seq == frontier.vector[change.id.device] + 1 else { return false }
        return change.vector.entries.allSatisfy { entry in
            entry.device == change.id.device || entry.seq <= frontier.vector[entry.device]
        }
    }

    private func checkSameAsStored(_ change: Change) throws {
        // A duplicate of a device's latest change (a message delivered twice, usually) is checked against the frontier.
        if let tip = frontier.tips[change.id.device], tip.seq == change.id.seq {
            guard tip.hash == change.hash else {
                throw StoreError.identityReused(change, storedHash: tip.hash, where: "in the log")
            }
            return
        }
        let deviceRow = try store.rowID(of: change.id.device, in: db, create: false)!
        // The statement the store's lookups by seq use (one fewer to prepare per connection); the body is left unread.
        let stored = try Data.fetchOne(
            db.cachedStatement(sql: ChangeLogStore.changeBySeq),
            arguments: [documentRow, deviceRow, Int64(change.id.seq)])
        guard let stored, try Stored.changeHash(stored) == change.hash else {
            throw StoreError.identityReused(change, storedHash: stored.flatMap { try? Stored.changeHash($0) }, where: "in the log")
        }
    }

    private mutating func apply(_ encoded: EncodedChange, into result: inout IngestResult) throws {
        let change = encoded.change
        try validateParents(change)
        let deviceRow = try store.rowID(of: change.id.device, in: db, create: true)!
        try insert(change, body: AtRest.packBody(encoded.bytes), documentRow: documentRow, deviceRow: deviceRow)
        store.keepDecoded(change, size: encoded.bytes.count, in: db)
        frontier.record(change, size: encoded.bytes.count, deviceRow: deviceRow)
        appliedNow[change.hash] = (change.id, change.lamport)
        result.applied.append(change.id)
    }

    /// A change's parents must be changes of its causal past with lower lamport timestamps, and only a device's
    /// very first change with no other device in its past may have none.
    private func validateParents(_ change: Change) throws {
        if change.parents.isEmpty {
            guard change.vector.entries.count == 1, change.id.seq == 1 else {
                throw StoreError(.invalidChange, "change \(change.id) names no parent but its vector \(change.vector) says it was made after other changes")
            }
            return
        }
        for parent in change.parents {
            guard let (id, lamport) = try lookUp(parent) else {
                throw StoreError(.invalidChange, "change \(change.id) names parent \(parent.shortHex), which is not in the log although everything in its vector is")
            }
            guard change.vector.contains(id) else {
                throw StoreError(.invalidChange, "change \(change.id) names parent \(id) outside its vector \(change.vector)")
            }
            guard lamport < change.lamport else {
                throw StoreError(.invalidChange, "change \(change.id) has lamport \(change.lamport), not above its parent \(id)'s \(lamport)")
            }
        }
    }

    private func lookUp(_ hash: ChangeHash) throws -> (ChangeID, UInt64)? {
        if let found = appliedNow[hash] { return found }
        // A parent is usually a device's latest change: the frontier knows its identity and lamport.
        if let (device, tip) = frontier.tips.first(where: { $0.value.hash == hash }) {
            return (ChangeID(device: device, seq: tip.seq), tip.lamport)
        }
        // The statement fetchChange(_:document:documentRow:in:) uses (one fewer to prepare); the body is left unread.
        var rows = try RawRows(
            db.cachedStatement(sql: ChangeLogStore.changeByHash),
            arguments: [documentRow, hash.prefix64])
        while let row = try rows.next() {
            guard try Stored.changeHash(row[3]) == hash else { continue }
            let device = try store.device(forRow: row[0], in: db)
            return (ChangeID(device: device, seq: try Stored.seq(row[1], "sequence number")), try Stored.unsigned(row[2], "lamport"))
        }
        return nil
    }

    /// Parks an early change in the pending table. Returns false when it was already waiting there.
    private func park(_ encoded: EncodedChange) throws -> Bool {
        let change = encoded.change
        let deviceRow = try store.rowID(of: change.id.device, in: db, create: true)!
        let key: StatementArguments = [documentRow, deviceRow, Int64(change.id.seq)]
        if let waiting = try Data.fetchOne(
            db.cachedStatement(sql: "SELECT hash FROM pending WHERE document = ? AND device = ? AND seq = ?"),
            arguments: key)
        {
            guard try Stored.changeHash(waiting) == change.hash else {
                throw StoreError.identityReused(change, storedHash: try Stored.changeHash(waiting), where: "among the pending changes")
            }
            return false
        }
        try db.cachedStatement(sql: "INSERT INTO pending (document, device, seq, hash, body) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: key + [change.hash.data, Data(encoded.bytes)])
        return true
    }

    /// Applies waiting changes that have become ready, until none is.
    private mutating func drainPending(into result: inout IngestResult) throws {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT device, seq, body FROM pending WHERE document = ?"), arguments: [documentRow])
        guard !rows.isEmpty else {
            hasWaiting = false
            return
        }
        var waiting: [(deviceRow: Int64, seq: Int64, change: EncodedChange)] = try rows.map { row in
            (row[0], row[1], try EncodedChange(decoding: [UInt8](row[2] as Data), document: document))
        }
        waiting.sort { ($0.change.change.lamport, $0.change.change.id) < ($1.change.change.lamport, $1.change.change.id) }
        let remove = try db.cachedStatement(sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ?")
        var progressed = true
        while progressed {
            progressed = false
            var stillWaiting: [(deviceRow: Int64, seq: Int64, change: EncodedChange)] = []
            for entry in waiting {
                if entry.change.change.id.seq <= frontier.vector[entry.change.change.id.device] {
                    try checkSameAsStored(entry.change.change)
                    try remove.execute(arguments: [documentRow, entry.deviceRow, entry.seq])
                } else if isReady(entry.change.change) {
                    do {
                        try apply(entry.change, into: &result)
                    } catch let error as StoreError where error.code == .invalidChange {
                        // Dropped, not kept: an invalid change that waited must not block the document forever.
                        result.rejected.append((entry.change.change.id, error.message))
                    }
                    try remove.execute(arguments: [documentRow, entry.deviceRow, entry.seq])
                    progressed = true
                } else {
                    stillWaiting.append(entry)
                }
            }
            waiting = stillWaiting
        }
        hasWaiting = !waiting.isEmpty
    }
}

extension StoreError {
    static func identityReused(_ change: Change, storedHash: ChangeHash?, where place: String) -> StoreError {
        let stored = storedHash.map { "hash \($0.shortHex)" } ?? "another hash"
        return StoreError(
            .integrity,
            "device \(change.id.device) seq \(change.id.seq) arrived with hash \(change.hash.shortHex), but \(place) it has \(stored): the device's identity was reused (a cloned or restored device); nothing was overwritten")
    }
}
