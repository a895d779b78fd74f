import FolioCore
import Foundation
import GRDB

/// The pending table: changes that arrive before their dependencies, or before a head that vouches for them, wait
/// there, and are examined again when what they wait for arrives.
extension Ingestion {
    /// A change of the change's past (the change itself excluded) that is not in the log; `nil` when it is ready.
    func firstMissingDependency(of change: Change) -> ChangeID? {
        let device = change.id.device
        if change.id.seq > frontier.vector[device] + 1 { return ChangeID(device: device, seq: change.id.seq - 1) }
        for entry in change.vector.entries where entry.device != device && entry.seq > frontier.vector[entry.device] {
            return ChangeID(device: entry.device, seq: entry.seq)
        }
        return nil
    }

    /// A change of the change's past that is not in the log, after staging the changes held for their head (see
    /// ``commitStaged(into:)``) that it needs and that are ready; `nil` when it is ready.
    mutating func missingDependency(of change: Change, into result: inout IngestResult, depth: Int = 0)
        throws -> ChangeID?
    {
        while let dependency = firstMissingDependency(of: change) {
            guard depth < 64, mayHaveWaiting,
                try stageHeld(dependency.device, into: &result, depth: depth + 1)
            else { return dependency }
        }
        return nil
    }

    /// Stages `device`'s next change when it is held in the pending table and ready (staging first the held
    /// changes it needs); whether it did.
    mutating func stageHeld(_ device: DeviceID, into result: inout IngestResult, depth: Int) throws -> Bool {
        guard let deviceRow = try store.rowID(of: device, in: db) else { return false }
        let seq = Int64(frontier.vector[device] + 1)
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT hash, body, head FROM pending
                    WHERE document = ? AND device = ? AND seq = ? AND vouched = 1 AND wait_device = ? AND wait_seq = ?
                    ORDER BY hash
                    """), arguments: [documentRow, deviceRow, seq, device.uuid.data, seq])
        for row in rows {
            let hash: Data = row[0]
            let body: Data = row[1]
            // One that no longer decodes is left to the drain, which drops it.
            guard !dropped.contains(hash),
                let encoded = try? EncodedChange(checking: [UInt8](body), document: document),
                encoded.change.hash.data == hash,
                try missingDependency(of: encoded.change, into: &result, depth: depth) == nil
            else { continue }
            try db.cachedStatement(
                sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?"
            ).execute(arguments: [documentRow, deviceRow, seq, hash])
            waitingDelta -= db.changesCount
            removedWaiting = true
            let head = (row[2] as Data?).flatMap { try? SignedHead(decoding: [UInt8]($0)) }
                .flatMap { $0.hash == encoded.change.hash ? $0 : nil }
            do {
                try stage(encoded, head: head, incoming: false)
                return true
            } catch let error as StoreError where error.code == .invalidChange {
                result.rejected.append((encoded.change.id, error.message))
            }
        }
        return false
    }

    /// Drops the waiting changes with the identity of `change`, just applied: they can never be, whatever they wait
    /// for.
    mutating func dropWaiting(sameIdentityAs change: Change, deviceRow: Int64, into result: inout IngestResult)
        throws
    {
        let identity: StatementArguments = [documentRow, deviceRow, Int64(change.id.seq)]
        let others = try Data.fetchAll(
            db.cachedStatement(sql: "SELECT hash FROM pending WHERE document = ? AND device = ? AND seq = ?"),
            arguments: identity)
        guard !others.isEmpty else { return }
        for other in others {
            dropped.insert(other)
            // Its own copy waited too (it came again, vouched for or ready): gone without a word.
            if other == change.hash.data { continue }
            let otherHash = (try? ColumnDecoder.changeHash(other))?.shortHex ?? "another hash"
            result.rejected.append(
                (
                    change.id,
                    "device \(change.id.device) seq \(change.id.seq) waited with hash \(otherHash), but the change with hash \(change.hash.shortHex) took that identity; nothing was overwritten"
                ))
        }
        try db.cachedStatement(sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ?").execute(
            arguments: identity)
        waitingDelta -= db.changesCount
        removedWaiting = true
    }

    enum Parking { case parked, alreadyWaiting, full }

    /// Parks an early change in the pending table, noting one change it waits for, unless it waits there already
    /// or the document has as many waiting changes as the store allows. Another change with the same identity may
    /// wait beside it: which of them is real is known only when they are ready. An unvouched change must also fit
    /// within ``StoreLimits/unvouchedBytes``, for which unvouched changes of earlier calls may be evicted.
    mutating func park(
        _ encoded: EncodedChange, waitingFor dependency: ChangeID, vouched: Bool, head named: SignedHead? = nil,
        into result: inout IngestResult
    ) throws -> Parking {
        let change = encoded.change
        let deviceRow = try store.insertingRowID(of: change.id.device, in: db)
        let key: StatementArguments = [documentRow, deviceRow, Int64(change.id.seq), change.hash.data]
        let head = (named ?? headsByHash[change.hash]).map { Data($0.encoded()) }
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?"),
            arguments: key) == true
        {
            // Vouched for now, it may wait for what it lacks (the walk from the head found it here already,
            // unless the caller vouches for it).
            if vouched {
                try db.cachedStatement(
                    sql: """
                        UPDATE pending SET vouched = 1, head = coalesce(?, head), wait_device = ?, wait_seq = ?
                        WHERE document = ? AND device = ? AND seq = ? AND hash = ?
                        """
                ).execute(arguments: [head, dependency.device.uuid.data, Int64(dependency.seq)] + key)
            }
            return .alreadyWaiting
        }
        let count =
            try waitingCount ?? Int.fetchOne(
                db.cachedStatement(sql: "SELECT waiting FROM document WHERE id = ?"), arguments: [documentRow]) ?? 0
        waitingCount = count
        guard count + waitingDelta < store.limits.waitingChangesPerDocument else { return .full }
        if !vouched {
            let unvouched =
                try unvouchedCount ?? Int.fetchOne(
                    db.cachedStatement(sql: "SELECT unvouched FROM document WHERE id = ?"), arguments: [documentRow])
                ?? 0
            guard unvouched < store.limits.unvouchedChangesPerDocument else { return .full }
            guard let evicted = try store.evictUnvouched(toFit: encoded.bytes.count, now: now, in: db) else {
                return .full
            }
            var evictedHere = 0
            if !evicted.isEmpty {
                // This document's count is written back with the frontier; the others' now.
                evictedHere = evicted[documentRow] ?? 0
                waitingDelta -= evictedHere
                if evictedHere > 0 { removedWaiting = true }
                try store.forgetWaiting(evicted.filter { $0.key != documentRow }, in: db)
                result.evicted += evicted.values.reduce(0, +)
            }
            unvouchedCount = unvouched - evictedHere + 1
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO pending (document, device, seq, hash, body, wait_device, wait_seq, vouched, head, arrived, size)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: key + [
                Data(encoded.bytes), dependency.device.uuid.data, Int64(dependency.seq), vouched, head, now,
                encoded.bytes.count,
            ])
        waitingDelta += 1
        return .parked
    }

    /// Applies waiting changes that have become ready, until none is: each device whose changes were applied has
    /// the changes that wait for one of them re-examined; one still missing something waits for that instead.
    mutating func drainPending(into result: inout IngestResult) throws {
        let select = try db.cachedStatement(
            sql: """
                SELECT device, seq, hash, body, vouched, head FROM pending INDEXED BY pending_by_dependency
                WHERE document = ? AND wait_device = ? AND wait_seq <= ?
                """)
        let remove = try db.cachedStatement(
            sql: "DELETE FROM pending WHERE document = ? AND device = ? AND seq = ? AND hash = ?")
        let rewait = try db.cachedStatement(
            sql: """
                UPDATE pending SET wait_device = ?, wait_seq = ? WHERE document = ? AND device = ? AND seq = ? AND hash = ?
                """)
        while let device = advanced.min() {
            advanced.remove(device)
            var candidates: [(deviceRow: Int64, hash: Data, change: EncodedChange, vouched: Bool, head: Data?)] = []
            var rows = try RawRows(select, arguments: [documentRow, device.uuid.data, Int64(frontier.vector[device])])
            var undecodable: [(deviceRow: Int64, seq: Int64, hash: Data, error: CodecError)] = []
            while let row = try rows.next() {
                let body: Data = row[3]
                do {
                    candidates.append(
                        (row[0], row[2], try EncodedChange(checking: [UInt8](body), document: document), row[4], row[5])
                    )
                } catch {
                    undecodable.append((row[0], row[1], row[2], error))
                }
            }
            // A waiting change whose bytes no longer decode (written by a build with looser limits, or damaged)
            // could never be applied: it goes, rather than failing every ingest that reaches it.
            for entry in undecodable {
                try remove.execute(arguments: [documentRow, entry.deviceRow, entry.seq, entry.hash])
                waitingDelta -= db.changesCount
                removedWaiting = true
                let id = ChangeID(
                    device: try store.device(forRow: entry.deviceRow, in: db), seq: UInt64(max(entry.seq, 1)))
                result.rejected.append((id, "its bytes cannot be decoded: \(entry.error)"))
            }
            candidates.sort {
                ($0.change.change.lamport, $0.change.change.id, $0.change.change.hash) < (
                    $1.change.change.lamport, $1.change.change.id, $1.change.change.hash
                )
            }
            for candidate in candidates {
                let change = candidate.change.change
                let key: StatementArguments = [documentRow, candidate.deviceRow, Int64(change.id.seq), candidate.hash]
                if dropped.contains(candidate.hash) { continue }
                if change.id.seq <= frontier.vector[change.id.device] {
                    // Taken already: by this very change (a duplicate), or by another with its identity, which won.
                    if try storedHash(of: change.id) != change.hash {
                        result.rejected.append(
                            (
                                change.id,
                                StoreError.identityReused(
                                    change, storedHash: try storedHash(of: change.id), where: "in the log"
                                ).message
                            ))
                    }
                    try remove.execute(arguments: key)
                    waitingDelta -= db.changesCount
                    removedWaiting = true
                } else if let dependency = try missingDependency(of: change, into: &result) {
                    try rewait.execute(arguments: [dependency.device.uuid.data, Int64(dependency.seq)] + key)
                } else if !candidate.vouched {
                    // Ready, but no head has reached it yet: it waits for one (see `vouch`).
                    try rewait.execute(arguments: [change.id.device.uuid.data, Int64(change.id.seq)] + key)
                } else {
                    try remove.execute(arguments: key)
                    waitingDelta -= db.changesCount
                    removedWaiting = true
                    do {
                        // Rows migrated from before changes in the local device's name were refused may claim it.
                        try refuseLocalIdentity(change)
                        let head = candidate.head.flatMap { try? SignedHead(decoding: [UInt8]($0)) }
                            .flatMap { $0.hash == change.hash ? $0 : nil }
                        try stage(candidate.change, head: head, incoming: false)
                    } catch let error as StoreError where error.code == .invalidChange {
                        // Dropped, not kept: an invalid change that waited must not block the document forever.
                        result.rejected.append((change.id, error.message))
                    }
                }
            }
        }
        if removedWaiting || hasWaiting == nil {
            hasWaiting =
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM pending WHERE document = ? LIMIT 1"),
                    arguments: [documentRow]) ?? false
        }
    }
}
