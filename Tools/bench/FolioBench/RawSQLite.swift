import FolioCore
import Foundation
import GRDBSQLite

/// The baseline: plain SQLite through its C API, one prepared statement, explicit transactions.
final class RawSQLite {
    private var db: OpaquePointer?

    /// Opens `url` in WAL mode with the same pragmas as Folio's store at `synchronous`.
    init(_ url: URL, synchronous: String) throws {
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { throw RawSQLiteError(message: "cannot open \(url.path)") }
        try execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA cache_size = -16384; PRAGMA mmap_size = 268435456"
        )
    }

    deinit { sqlite3_close_v2(db) }

    func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// A row of the change table.
    struct ChangeRow {
        var document: Int64
        var device: Int64
        var seq: Int64
        var lamport: Int64
        var kind: Int64
        var hashKey: Int64
        var hash: [UInt8]
        var body: [UInt8]
    }

    /// Inserts `rows` into `change` in transactions of `batch` rows.
    func insert(_ rows: [ChangeRow], batch: Int) throws {
        var statement: OpaquePointer?
        let sql =
            "INSERT INTO change (document, device, seq, lamport, kind, hash_key, hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        for start in stride(from: 0, to: rows.count, by: batch) {
            try execute("BEGIN IMMEDIATE")
            for row in rows[start..<min(start + batch, rows.count)] {
                sqlite3_bind_int64(statement, 1, row.document)
                sqlite3_bind_int64(statement, 2, row.device)
                sqlite3_bind_int64(statement, 3, row.seq)
                sqlite3_bind_int64(statement, 4, row.lamport)
                sqlite3_bind_int64(statement, 5, row.kind)
                sqlite3_bind_int64(statement, 6, row.hashKey)
                row.hash.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 7, $0.baseAddress, Int32($0.count), nil) }
                row.body.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 8, $0.baseAddress, Int32($0.count), nil) }
                guard sqlite3_step(statement) == SQLITE_DONE else {
                    throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
                }
                sqlite3_reset(statement)
            }
            try execute("COMMIT")
        }
    }

    /// The bytes of the database's pages in use (all pages but the free ones), the WAL's pages included: what the
    /// store holds, whatever the file's size.
    func usedBytes() throws -> Int {
        func integer(_ sql: String) throws -> Int {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
                throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
            }
            defer { sqlite3_finalize(statement) }
            return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : 0
        }
        return try (integer("PRAGMA page_count") - integer("PRAGMA freelist_count")) * integer("PRAGMA page_size")
    }

    /// What the store's bytes are made of: file pages, change bodies, blobs.
    func composition() throws -> [(String, String)] {
        func integer(_ sql: String) throws -> Int64 {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
                throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
            }
            defer { sqlite3_finalize(statement) }
            return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0
        }
        return [
            ("  database pages", "\(try integer("PRAGMA page_count")) x \(try integer("PRAGMA page_size")) bytes"),
            (
                "  change rows (the tail)",
                "\(try integer("SELECT COUNT(*) FROM change")), \(try integer("SELECT COALESCE(SUM(length(body)), 0) FROM change")) bytes of bodies"
            ),
            (
                "  segments (folded changes)",
                "\(try integer("SELECT COUNT(*) FROM segment")), \(try integer("SELECT COALESCE(SUM(count), 0) FROM segment")) changes in \(try integer("SELECT COALESCE(SUM(length(bytes)), 0) FROM segment")) bytes"
            ),
            ("  blob bytes (checkpoints)", "\(try integer("SELECT COALESCE(SUM(length(bytes)), 0) FROM blob"))"),
            (
                "  local state bytes (undo…)",
                "\(try integer("SELECT COALESCE(SUM(length(value)), 0) FROM local_state"))"
            ),
            ("  free pages", "\(try integer("PRAGMA freelist_count"))"),
        ]
    }

    /// The row of the change table each logged change has or had before it was folded into a segment, in key
    /// order: the rows a store that never folds would hold (the baseline of append, ingest and serve).
    func changeRows() throws -> [ChangeRow] {
        (try tableRows() + foldedRows()).sorted { ($0.document, $0.device, $0.seq) < ($1.document, $1.device, $1.seq) }
    }

    /// The rows the folded changes had: each segment decoded (after the segments before it) and its changes written
    /// back as rows, with their canonical encodings as bodies.
    private func foldedRows() throws -> [ChangeRow] {
        var devices: [DeviceID: Int64] = [:]
        var documents: [Int64: DocumentID] = [:]
        try each("SELECT id, uuid FROM device") { devices[DeviceID(UUIDBytes(Data($1)))] = $0 }
        try each("SELECT id, uuid FROM document") { documents[$0] = DocumentID(UUIDBytes(Data($1))) }
        var earlier: [Int64: [ChangeID: ChangeStamp]] = [:]
        var rows: [ChangeRow] = []
        var failure: (any Error)?
        try each("SELECT id, bytes FROM segment ORDER BY id") { id, bytes in
            let documentRow = id >> 32
            guard failure == nil, let document = documents[documentRow] else { return }
            do {
                let changes = try ChangeRunCodec.decode(bytes, document: document) { earlier[documentRow]?[$0] }
                for change in changes {
                    earlier[documentRow, default: [:]][change.id] = ChangeStamp(change)
                    rows.append(
                        ChangeRow(
                            document: documentRow, device: devices[change.id.device] ?? 0, seq: Int64(change.id.seq),
                            lamport: Int64(change.lamport), kind: Int64(change.kind.tag),
                            hashKey: change.hash.prefix64, hash: Array(change.hash.data), body: change.encoded()))
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return rows
    }

    /// Runs `sql` and calls `body` with each row's first column as an integer and its second as bytes.
    private func each(_ sql: String, _ body: (Int64, [UInt8]) throws -> Void) throws {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        while sqlite3_step(statement) == SQLITE_ROW {
            let count = Int(sqlite3_column_bytes(statement, 1))
            let bytes =
                count > 0
                ? Array(UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, 1), count: count)) : []
            try body(sqlite3_column_int64(statement, 0), bytes)
        }
    }

    /// Every row of the change table, in key order.
    private func tableRows() throws -> [ChangeRow] {
        var statement: OpaquePointer?
        let sql =
            "SELECT document, device, seq, lamport, kind, hash_key, hash, body FROM change ORDER BY document, device, seq"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [ChangeRow] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            func blob(_ column: Int32) -> [UInt8] {
                let count = Int(sqlite3_column_bytes(statement, column))
                guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
                return Array(UnsafeRawBufferPointer(start: pointer, count: count))
            }
            rows.append(
                ChangeRow(
                    document: sqlite3_column_int64(statement, 0), device: sqlite3_column_int64(statement, 1),
                    seq: sqlite3_column_int64(statement, 2), lamport: sqlite3_column_int64(statement, 3),
                    kind: sqlite3_column_int64(statement, 4), hashKey: sqlite3_column_int64(statement, 5),
                    hash: blob(6),
                    body: blob(7)))
        }
        return rows
    }
}

struct RawSQLiteError: Error, CustomStringConvertible {
    var message: String
    var description: String { "SQLite: \(message)" }
}
