import CSQLiteConfig
import Foundation
import GRDB

/// Ways for crash tests and simulations to make a store end as a killed process leaves it; not for products.
package enum CrashSimulation {
    /// Makes `store` end as a killed process would leave it: when the last reference goes, its connection closes
    /// without folding the write-ahead log into the database file, and the log stays beside it for the next open to
    /// recover from. The simulator's crashes use it; ``ChangeLogStore/close()`` still folds.
    ///
    /// Only with ``StoreAccess/exclusive``: a pool's readers would fold the log when they close.
    ///
    /// - Throws: ``StoreError`` `database` when the store has shared access or SQLite refuses.
    package static func leaveLogOnRelease(of store: ChangeLogStore) throws {
        guard let exclusiveQueue = store.exclusiveQueue else {
            throw StoreError(.database, "only a store with exclusive access can leave its log on release")
        }
        do {
            try exclusiveQueue.writeWithoutTransaction { db in
                try store.checkAlive()
                let code = folio_sqlite_skip_checkpoint_on_close(db.sqliteConnection)
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
            }
        } catch {
            throw StoreError.translating(error, while: "arranging for \(store.url.path) to keep its log")
        }
    }

    /// Ends `store` as a killed process ends it, now rather than when its last reference goes: its connection
    /// closes without folding the write-ahead log (``leaveLogOnRelease(of:)``), so the file's lock goes with it.
    /// Whatever of the dead process still refers to the store, however late it runs, can no longer reach the
    /// database: every later read, write, fold, copy or close fails with ``StoreError`` `database` (what the store
    /// keeps in memory, such as its list of documents, still answers).
    ///
    /// Only with ``StoreAccess/exclusive``.
    ///
    /// - Throws: ``StoreError`` `database` when the store has shared access or SQLite refuses to close the
    ///   connection (a statement still in use), which then keeps the file's lock.
    package static func kill(_ store: ChangeLogStore) throws {
        try leaveLogOnRelease(of: store)
        // Set before the close is queued on the connection's queue: every closure that runs there after it sees it.
        store.isKilled.store(true, ordering: .releasing)
        do {
            try store.exclusiveQueue?.close()
        } catch {
            throw StoreError.translating(error, while: "closing \(store.url.path) as a killed process would")
        }
    }
}
