import FolioCore
import Foundation
import GRDB

extension ChangeLogStore {
    /// The documents that have at least one change or waiting change, in identity order.
    ///
    /// - Throws: ``StoreError``.
    public func documents() throws(StoreError) -> [DocumentID] {
        if let exclusiveCache { return exclusiveCache.listedDocuments().map(\.document).sorted() }
        return try read("listing documents") { db in
            // A document row can exist without changes (a sync cursor creates one): list only documents with a log.
            try Data.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT uuid FROM document
                        WHERE id IN (SELECT document FROM frontier) OR id IN (SELECT document FROM pending)
                        """)
            )
            .map { DocumentID(try ColumnDecoder.uuid($0)) }.sorted()
        }
    }

    /// The document's version vector: per device, the highest sequence number in the log (all earlier ones are
    /// there too). Empty for a document with no change.
    ///
    /// - Complexity: O(devices).
    /// - Throws: ``StoreError``.
    public func vector(of document: DocumentID) throws(StoreError) -> VersionVector {
        try read("reading the vector of document \(document)") { db in
            guard let row = try rowID(of: document, in: db) else { return VersionVector() }
            return try frontier(of: row, in: db).vector
        }
    }

    /// Every document with a log, with its vector and the hashes of its heads (in causal order), read at once:
    /// what a sync session announces.
    ///
    /// - Complexity: O(documents × devices), in one read transaction of two queries.
    /// - Throws: ``StoreError``.
    public func summaries() throws(StoreError) -> [(document: DocumentID, vector: VersionVector, heads: [ChangeHash])] {
        if let exclusiveCache {
            return exclusiveCache.listedDocuments().map { entry in
                (entry.document, entry.frontier.vector, entry.frontier.headsInOrder)
            }
            .sorted { $0.document < $1.document }
        }
        return try read("summarising the documents") { db in
            var result: [(document: DocumentID, vector: VersionVector, heads: [ChangeHash])] =
                try Frontier.all(in: db).values.map { entry in
                    (entry.document, entry.frontier.vector, entry.frontier.headsInOrder)
                }
            // Documents whose every change still waits for a missing one have a log but no frontier yet.
            let waiting = try Data.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT uuid FROM document WHERE id IN (SELECT document FROM pending) AND id NOT IN (SELECT document FROM frontier)
                        """))
            for uuid in waiting { result.append((DocumentID(try ColumnDecoder.uuid(uuid)), VersionVector(), [])) }
            return result.sorted { $0.document < $1.document }
        }
    }

    /// The document's heads (the changes no other change was made on), in causal order. More than one head means
    /// concurrent versions.
    ///
    /// - Complexity: O(devices + heads × log n).
    /// - Throws: ``StoreError``.
    public func heads(of document: DocumentID) throws(StoreError) -> [Change] {
        try read("reading the heads of document \(document)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return [] }
            let frontier = try self.frontier(of: documentRow, in: db)
            return try frontier.heads.map { head in
                // A head kept decoded, with its tip or among recent changes, needs no read at all.
                guard let tip = frontier.tips[head.device] else {
                    throw StoreError(
                        .corrupt, "document \(document) has a head of device \(head.device) without its tip")
                }
                if let change = tip.change { return change }
                if let cached = decodedChanges.withLock({ $0.value(tip.hash) }), cached.document == document {
                    return cached
                }
                let change = try fetchChange(
                    document: document, documentRow: documentRow, device: head.device, seq: head.seq, in: db)
                // A large change is now among the recent ones; a small one is kept with its tip.
                if decodedChanges.withLock({ $0.value(tip.hash) }) == nil {
                    exclusiveCache?.remember(change, documentRow: documentRow)
                }
                return change
            }
        }
    }

    /// The changes of `document` that `vector` lacks, in causal order: exactly what a peer at `vector` must be sent.
    ///
    /// - Complexity: O(devices + missing × log n): the cost grows with what is missing, not with the history.
    /// - Throws: ``StoreError``.
    public func changes(of document: DocumentID, since vector: VersionVector = VersionVector()) throws(StoreError)
        -> [Change]
    {
        try changes(of: document, since: vector, within: nil)
    }

    /// The changes of `document` that `vector` lacks and `limit` includes, in causal order: the changes between two
    /// versions, as a replay of an older version reads them (all that `vector` lacks when `limit` is `nil`).
    ///
    /// - Complexity: O(devices + those changes × log n): the cost grows with what is read, not with the history.
    /// - Throws: ``StoreError``.
    public func changes(of document: DocumentID, since vector: VersionVector, within limit: VersionVector?)
        throws(StoreError) -> [Change]
    {
        try read("reading the changes of document \(document) since \(vector)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return [] }
            let frontier = try self.frontier(of: documentRow, in: db)
            var result: [Change] = []
            let statement = try db.cachedStatement(
                sql: """
                    SELECT hash, length(body), body FROM change WHERE document = ? AND device = ? AND seq > ? AND seq <= ?
                    ORDER BY seq
                    """)
            let wanted = limit.map { frontier.vector.intersecting($0) } ?? frontier.vector
            let missing = wanted.changesMissing(from: vector)
            let folded = missing.isEmpty ? [:] : try foldedSeqs(of: documentRow, in: db)
            // The folded part of each device's missing seqs, read from the segments holding them when their seqs
            // say which, else from the segments in order.
            var foldedParts: [(device: DeviceID, seqs: ClosedRange<UInt64>)] = []
            for (device, seqs) in missing {
                if let deviceRow = frontier.tips[device]?.deviceRow, let foldedSeq = folded[deviceRow],
                    seqs.lowerBound <= foldedSeq
                {
                    foldedParts.append((device, seqs.lowerBound...min(foldedSeq, seqs.upperBound)))
                }
            }
            if try !appendFolded(foldedParts, of: document, documentRow: documentRow, in: db, to: &result) {
                for (device, range) in foldedParts {
                    let start = result.count
                    // The segments up to those holding both ends of the range.
                    let prefix = try self.segments(of: document, documentRow: documentRow, in: db) {
                        $0.holds(device, ends: range)
                    }
                    if prefix.append(device, seqs: range, to: &result) != nil {
                        // A seq between the ends lies in a later segment (a device folded out of order): all of
                        // them are read.
                        result.removeSubrange(start...)
                        let all = try self.segments(of: document, documentRow: documentRow, in: db)
                        if let seq = all.append(device, seqs: range, to: &result) {
                            throw StoreError(
                                .corrupt,
                                "document \(document)'s segments lack change \(device)#\(seq), which they fold")
                        }
                    }
                }
            }
            for (device, seqs) in missing {
                guard let deviceRow = frontier.tips[device]?.deviceRow else {
                    throw StoreError(.corrupt, "document \(document) has changes of device \(device) without its tip")
                }
                var rows = try RawRows(
                    statement, arguments: [documentRow, deviceRow, Int64(seqs.lowerBound - 1), Int64(seqs.upperBound)])
                while let row = try rows.next() {
                    // Small bodies decode faster than a lookup; large ones may be kept decoded.
                    if (row[1] as Int) < Self.cachedChangeThreshold {
                        result.append(try ColumnDecoder.change(row[2], document: document))
                    } else {
                        result.append(
                            try decodedChange(try ColumnDecoder.changeHash(row[0]), document: document) { row[2] })
                    }
                }
            }
            return result.sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
        }
    }

    /// The lifecycle changes of `document` (create, rename, move, delete, restore), in causal order, read without
    /// the edits. An exclusive store remembers them, and each of its transactions adds the ones it records.
    ///
    /// - Complexity: O(lifecycle changes × log n).
    /// - Throws: ``StoreError``.
    public func lifecycleChanges(of document: DocumentID) throws(StoreError) -> [Change] {
        try read("reading the lifecycle of document \(document)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return [] }
            if let remembered = exclusiveCache?.document(documentRow)?.lifecycle { return remembered }
            var lifecycle = try foldedLifecycle(of: document, documentRow: documentRow, in: db)
            var rows = try RawRows(
                db.cachedStatement(
                    sql: "SELECT body FROM change INDEXED BY change_lifecycle WHERE document = ? AND kind = 1"),
                arguments: [documentRow])
            while let row = try rows.next() { lifecycle.append(try ColumnDecoder.change(row[0], document: document)) }
            lifecycle.sort { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
            exclusiveCache?.remember(lifecycle: lifecycle, documentRow: documentRow)
            return lifecycle
        }
    }

    /// The resolution changes of `document`, in causal order, read without the edits.
    ///
    /// - Complexity: O(resolutions × log n).
    /// - Throws: ``StoreError``.
    public func resolutionChanges(of document: DocumentID) throws(StoreError) -> [Change] {
        try read("reading the resolutions of document \(document)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return [] }
            return try changesInCausalOrder(
                "SELECT body FROM change INDEXED BY change_resolution WHERE document = ? AND kind = 3",
                document: document, documentRow: documentRow, in: db
            ) { if case .resolution = $0.kind { true } else { false } }
        }
    }

    /// The changes whose bodies `sql` selects for a document row, decoded, and the changes of its segments that
    /// `isWanted`, by lamport then identity.
    private func changesInCausalOrder(
        _ sql: String, document: DocumentID, documentRow: Int64, in db: Database, _ isWanted: (Change) -> Bool
    ) throws -> [Change] {
        var rows = try RawRows(db.cachedStatement(sql: sql), arguments: [documentRow])
        var changes = try segments(of: document, documentRow: documentRow, in: db).changes.filter(isWanted)
        while let row = try rows.next() { changes.append(try ColumnDecoder.change(row[0], document: document)) }
        return changes.sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
    }

    /// The change with this identity in `document`'s log, if present.
    ///
    /// - Complexity: O(log n).
    /// - Throws: ``StoreError``.
    public func change(_ id: ChangeID, of document: DocumentID) throws(StoreError) -> Change? {
        try read("looking up change \(id)") { db in
            guard let documentRow = try rowID(of: document, in: db),
                let deviceRow = try rowID(of: id.device, in: db)
            else { return nil }
            var rows = try RawRows(
                db.cachedStatement(sql: Self.changeBySeq),
                arguments: [documentRow, deviceRow, Int64(id.seq)])
            guard let row = try rows.next() else {
                var found: [Change] = []
                if try appendFolded(
                    [(id.device, id.seq...id.seq)], of: document, documentRow: documentRow, in: db, to: &found)
                {
                    return found.first
                }
                // The segments as far as the change (all of them when it is not there).
                return try segments(of: document, documentRow: documentRow, in: db) {
                    $0.holds(id.device, ends: id.seq...id.seq)
                }
                .change(id)
            }
            return try decodedChange(try ColumnDecoder.changeHash(row[0]), document: document) { row[1] }
        }
    }

    /// The change with this hash in `document`'s log, if present.
    ///
    /// - Complexity: O(log n).
    /// - Throws: ``StoreError``.
    public func change(_ hash: ChangeHash, of document: DocumentID) throws(StoreError) -> Change? {
        try read("looking up change \(hash.shortHex)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return nil }
            return try fetchChange(hash, document: document, documentRow: documentRow, in: db)
        }
    }

    func fetchChange(_ hash: ChangeHash, document: DocumentID, documentRow: Int64, in db: Database) throws -> Change? {
        // A device's latest change, which an exclusive store may keep decoded with its frontier (committed state).
        if let kept = exclusiveCache?.document(documentRow)?.frontier.keptChange(hash) { return kept }
        var bodies = try RawRows(db.cachedStatement(sql: Self.changeByHash), arguments: [documentRow, hash.prefix64])
        while let row = try bodies.next() {
            guard try ColumnDecoder.changeHash(row[3]) == hash else { continue }
            return try decodedChange(hash, document: document) { row[4] }
        }
        return try segments(of: document, documentRow: documentRow, in: db).change(hash)
    }

    /// The changes of a document (`?` its row) whose hash starts with a 64-bit key (`?`): device, seq, lamport,
    /// hash and body, columns read on demand. INDEXED BY: left to itself, SQLite prefers the covering primary key
    /// and scans the whole document.
    static let changeByHash =
        "SELECT device, seq, lamport, hash, body FROM change INDEXED BY change_by_hash WHERE document = ? AND hash_key = ?"

    /// The change of a document (`?` its row) by device row and seq: hash and body, read on demand.
    static let changeBySeq = "SELECT hash, body FROM change WHERE document = ? AND device = ? AND seq = ?"

    /// The changes of `document` that wait for their dependencies, in causal order.
    ///
    /// - Throws: ``StoreError``.
    public func pendingChanges(of document: DocumentID) throws(StoreError) -> [Change] {
        try read("reading the pending changes of document \(document)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return [] }
            return try Data.fetchAll(
                db.cachedStatement(sql: "SELECT body FROM pending WHERE document = ?"), arguments: [documentRow]
            )
            .map { try Change(checking: $0, document: document) }
            .sorted { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
        }
    }

    /// The number of changes in the log of every document (waiting changes excluded).
    ///
    /// - Throws: ``StoreError``.
    public func changeCount() throws(StoreError) -> Int {
        // Every device's changes are in the log from 1 to its vector entry, so the vectors count the log.
        if let exclusiveCache {
            return exclusiveCache.listedDocuments().reduce(0) { $0 + Int($1.frontier.vector.changeCount) }
        }
        return try read("counting changes") { db in
            try Int.fetchOne(
                db.cachedStatement(
                    sql: "SELECT (SELECT COUNT(*) FROM change) + (SELECT coalesce(sum(count), 0) FROM segment)")) ?? 0
        }
    }

    func fetchChange(document: DocumentID, documentRow: Int64, device: DeviceID, seq: UInt64, in db: Database) throws
        -> Change
    {
        var rows = try rowID(of: device, in: db).map { deviceRow in
            try RawRows(
                db.cachedStatement(sql: Self.changeBySeq),
                arguments: [documentRow, deviceRow, Int64(seq)])
        }
        guard let row = try rows?.next() else {
            if let folded = try segments(of: document, documentRow: documentRow, in: db).change(
                ChangeID(device: device, seq: seq))
            {
                return folded
            }
            throw StoreError(
                .corrupt, "the frontier names change \(device)#\(seq) of document \(document), which is not in the log")
        }
        return try decodedChange(try ColumnDecoder.changeHash(row[0]), document: document) { row[1] }
    }
}
