import Foundation
import GRDB
import GRDBSQLite

/// The rows of a cached statement, read straight from SQLite, for the store's hottest queries.
///
/// GRDB's `Row.fetchCursor` makes a row object and an index of lowercased column names for every cursor, and wraps
/// every value it reads; these queries run thousands of times a second with a handful of rows each, so they read
/// their columns by position instead. The statement is reset when the rows are dropped, even if they were not all
/// read. Only for `SELECT`s: GRDB does not see the statement run, which matters only to its observation of writes.
struct RawRows: ~Copyable {
    private let statement: Statement

    /// Runs `statement` with `arguments`.
    init(_ statement: Statement, arguments: StatementArguments) throws {
        try statement.setArguments(arguments)
        self.statement = statement
    }

    /// The next row (valid until the next call), or nil after the last.
    mutating func next() throws -> RawRow? {
        let sqliteStatement = statement.sqliteStatement
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_ROW:
            return RawRow(statement: sqliteStatement)
        case SQLITE_DONE:
            return nil
        case let code:
            let message = sqlite3_errmsg(sqlite3_db_handle(sqliteStatement)).map { String(cString: $0) }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        }
    }

    deinit {
        sqlite3_reset(statement.sqliteStatement)
    }
}

/// The current row of ``RawRows``, read by column position. A NULL reads as 0 or as empty bytes, except as `Data?`.
struct RawRow {
    fileprivate let statement: SQLiteStatement

    subscript(_ column: Int) -> Int64 { sqlite3_column_int64(statement, Int32(column)) }
    subscript(_ column: Int) -> Int { Int(sqlite3_column_int64(statement, Int32(column))) }
    subscript(_ column: Int) -> Bool { sqlite3_column_int64(statement, Int32(column)) != 0 }

    subscript(_ column: Int) -> Data {
        // The pointer first, then the size (SQLite's order); an empty blob has no pointer.
        guard let bytes = sqlite3_column_blob(statement, Int32(column)) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, Int32(column))))
    }

    subscript(_ column: Int) -> Data? {
        sqlite3_column_type(statement, Int32(column)) == SQLITE_NULL ? nil : self[column] as Data
    }
}
