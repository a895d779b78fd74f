import FolioCore
import Foundation
import GRDB

/// The changes of a ``ChangeLogStore`` that wait for a signed head of their device (see ``IngestResult/unvouched``
/// and ``ChangeLogStore/unvouched``), within the bounds of ``StoreLimits/unvouchedBytes`` and
/// ``StoreLimits/unvouchedAge``. Every call is one transaction of the store.
public struct UnvouchedChanges: Sendable {
    let store: ChangeLogStore

    /// Drops the unvouched changes (waiting for a signed head of their device, see ``IngestResult/unvouched``) that
    /// have waited ``StoreLimits/unvouchedAge`` or longer at `now`, in every document; returns how many. An ingest
    /// does the same at its start (``IngestResult/expired``); a server calls this to free the bytes of a library
    /// nobody syncs. Changes vouched for, which wait for their dependencies, stay. A dropped change comes again with
    /// a later sync, with a head that lets it in.
    ///
    /// - Parameter now: the time to measure ages at, in the store's clock's terms; `nil` reads the store's clock.
    /// - Throws: ``StoreError`` with code `database`.
    @discardableResult
    public func dropExpired(now: Timestamp? = nil) throws(StoreError) -> Int {
        let now = (now ?? store.clock.now()).millisecondsSince1970
        return try store.write("dropping expired unvouched changes") { db in
            try store.expireUnvouched(now: now, in: db, always: true)
        }
    }

    /// The bytes of the change bodies that wait for a signed head, across the store: what
    /// ``StoreLimits/unvouchedBytes`` bounds.
    ///
    /// - Throws: ``StoreError`` with code `database`.
    public func byteCount() throws(StoreError) -> Int {
        try store.read("reading the bytes of unvouched changes") { db in try ChangeLogStore.unvouchedTotal(in: db) }
    }
}

/// The bounds on waiting changes nobody vouches for, kept by every ingest.
extension ChangeLogStore {
    /// The running total of unvouched bytes, which the pending table's triggers keep.
    static func unvouchedTotal(in db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT unvouched_bytes FROM pending_total WHERE id = 0")) ?? 0
    }

    /// Drops the unvouched changes that arrived at or before `now − unvouchedAge`, inside `db`'s open write
    /// transaction, and returns how many. Unless `always`, it asks the pending table nothing while
    /// ``unvouchedFloor`` shows that none can be that old, so an ingest pays a comparison.
    func expireUnvouched(now: Int64, in db: Database, always: Bool = false) throws -> Int {
        let age = limits.unvouchedAgeMilliseconds
        let cutoff = now.subtractingReportingOverflow(age).overflow ? Int64.min : now - age
        if !always, let floor = unvouchedFloor.withLock({ $0 }), floor > cutoff { return 0 }
        var counts: [Int64: Int] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT document, count(*) FROM pending INDEXED BY pending_unvouched_by_arrival
                    WHERE vouched = 0 AND arrived <= ? GROUP BY document
                    """), arguments: [cutoff])
        {
            counts[row[0]] = row[1]
        }
        if !counts.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM pending WHERE vouched = 0 AND arrived <= ?").execute(arguments: [
                cutoff
            ])
            try forgetWaiting(counts, in: db)
        }
        // The oldest left, or now (by the store's clock too, when the caller named another time): changes parked
        // later, by this store or another with the same clock, arrive after it.
        let oldest = try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT arrived FROM pending INDEXED BY pending_unvouched_by_arrival WHERE vouched = 0
                    ORDER BY arrived LIMIT 1
                    """))
        let floor = min(oldest ?? now, now, always ? clock.now().millisecondsSince1970 : now)
        db.afterNextTransaction(
            onCommit: { _ in self.unvouchedFloor.withLock { $0 = floor } },
            onRollback: { _ in self.unvouchedFloor.withLock { $0 = nil } })
        return counts.values.reduce(0, +)
    }

    /// Makes room for `size` more unvouched bytes, inside `db`'s open write transaction, by dropping the unvouched
    /// changes that arrived before `now`, oldest first. Returns how many of each document were dropped, or `nil`
    /// when dropping all of them would not make room (then nothing is dropped). The caller accounts for the
    /// documents' waiting counts (see ``forgetWaiting(_:in:)``).
    func evictUnvouched(toFit size: Int, now: Int64, in db: Database) throws -> [Int64: Int]? {
        let total = try Self.unvouchedTotal(in: db)
        let excess = total + size - limits.unvouchedBytes
        guard excess > 0 else { return [:] }
        guard size <= limits.unvouchedBytes else { return nil }
        var victims: [(document: Int64, device: Int64, seq: Int64, hash: Data)] = []
        var freed = 0
        do {
            // Reset (when dropped) before the deletes.
            var rows = try RawRows(
                db.cachedStatement(
                    sql: """
                        SELECT document, device, seq, hash, size FROM pending INDEXED BY pending_unvouched_by_arrival
                        WHERE vouched = 0 AND arrived < ? ORDER BY arrived
                        """), arguments: [now])
            while freed < excess, let row = try rows.next() {
                victims.append((row[0], row[1], row[2], row[3]))
                freed += row[4] as Int
            }
        }
        guard freed >= excess else { return nil }
        let remove = try db.cachedStatement(
            sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?")
        var counts: [Int64: Int] = [:]
        for victim in victims {
            try remove.execute(arguments: [victim.document, victim.device, victim.seq, victim.hash])
            counts[victim.document, default: 0] += db.changesCount
        }
        return counts
    }

    /// Lowers the waiting counts of the documents in `counts` (by document row: how many of its waiting changes
    /// were just dropped), and tells the memory of an exclusive store whether they still have any.
    func forgetWaiting(_ counts: [Int64: Int], in db: Database) throws {
        for (documentRow, count) in counts.sorted(by: { $0.key < $1.key }) where count > 0 {
            try db.cachedStatement(sql: "UPDATE document SET waiting = max(0, waiting - ?) WHERE id = ?")
                .execute(arguments: [count, documentRow])
            guard let exclusiveCache else { continue }
            let hasWaiting =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? LIMIT 1"),
                    arguments: [documentRow]) ?? false
            exclusiveCache.stage(hasWaiting: hasWaiting, of: documentRow, in: db)
        }
    }
}
