import FolioTestWorkPool
import Foundation
import GRDB
import Testing

@testable import FolioStore

/// `RawRows` reads a cached statement's rows by position, reads NULL as nil only when asked for an optional, resets
/// the statement when dropped early, and reports SQLite's errors with the statement's text.
@Suite(.workPool) struct RawRowsTests {
    let queue: DatabaseQueue

    init() throws {
        queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER, b BLOB, c INTEGER)")
            try db.execute(sql: "INSERT INTO t VALUES (1, x'0102', 1), (2, NULL, 0), (3, x'', 7)")
        }
    }

    @Test func columnsAreReadByPosition() throws {
        let seen = try queue.read { db in
            var rows = try RawRows(
                db.cachedStatement(sql: "SELECT a, b, c FROM t WHERE a >= ? ORDER BY a"), arguments: [1])
            var seen: [String] = []
            while let row = try rows.next() {
                let a: Int64 = row[0]
                let bytes: Data = row[1]
                let optional: Data? = row[1]
                let flag: Bool = row[2]
                let count: Int = row[2]
                seen.append("\(a) \(Array(bytes)) \(optional.map { "\(Array($0))" } ?? "nil") \(flag) \(count)")
            }
            return seen
        }
        #expect(seen == ["1 [1, 2] [1, 2] true 1", "2 [] nil false 0", "3 [] [] true 7"])
    }

    @Test func rowsDroppedEarlyLeaveTheStatementReadyForTheNextRun() throws {
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "SELECT a FROM t ORDER BY a")
            do {
                var rows = try RawRows(statement, arguments: [])
                #expect(try rows.next().map { $0[0] as Int64 } == 1)
            }
            // The statement was reset: nothing holds the table, and it runs again from the first row.
            try db.execute(sql: "DROP TABLE t")
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            try db.execute(sql: "INSERT INTO t VALUES (5)")
            var again = try RawRows(db.cachedStatement(sql: "SELECT a FROM t ORDER BY a"), arguments: [])
            #expect(try again.next().map { $0[0] as Int64 } == 5)
            #expect(try again.next() == nil)
        }
    }

    @Test func aFailingStepThrowsWithTheStatement() throws {
        let error = #expect(throws: DatabaseError.self) {
            try queue.read { db in
                var rows = try RawRows(
                    db.cachedStatement(sql: "SELECT abs(a - 9223372036854775807 - 2) FROM t"), arguments: [])
                while try rows.next() != nil {}
            }
        }
        #expect(error?.sql == "SELECT abs(a - 9223372036854775807 - 2) FROM t")
        #expect(error?.message?.contains("overflow") == true, "\(String(describing: error))")
    }
}
