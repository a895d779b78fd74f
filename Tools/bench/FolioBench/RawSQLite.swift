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
            ("  change bodies bytes", "\(try integer("SELECT COALESCE(SUM(length(body)), 0) FROM change"))"),
            ("  blob bytes (checkpoints)", "\(try integer("SELECT COALESCE(SUM(length(bytes)), 0) FROM blob"))"),
            (
                "  local state bytes (undo…)",
                "\(try integer("SELECT COALESCE(SUM(length(value)), 0) FROM local_state"))"
            ),
            ("  free pages", "\(try integer("PRAGMA freelist_count"))"),
        ]
    }

    /// Every row of the change table, in key order.
    func changeRows() throws -> [ChangeRow] {
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
