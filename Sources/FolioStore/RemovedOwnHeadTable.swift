import GRDB

/// The table of the heads a store keeps for documents whose local copy was removed
/// (`ChangeLogStore.removeLocalCopy(of:)`), made with the first removal that keeps one: a store that never removes a
/// copy, as most never do, pays no page for it. Stores made before it was made on demand hold it from their
/// migration, with whatever heads their removals kept.
///
/// `removed_own_head`: per such document and identity of this device's that had changes in it, a head of the
/// identity's latest change there, signed at the removal. A peer that brings the document again brings those changes,
/// which the store takes back (and no other change in its names); until they are back it makes no new change there.
enum RemovedOwnHeadTable {
    /// Whether the table exists.
    static func exists(in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'removed_own_head'"))
            == true
    }

    /// Makes the table unless it exists.
    static func create(in db: Database) throws {
        guard try !exists(in: db) else { return }
        try db.execute(
            sql: """
                CREATE TABLE removed_own_head (
                    document INTEGER NOT NULL,
                    device INTEGER NOT NULL,
                    head BLOB NOT NULL,
                    PRIMARY KEY (document, device)
                ) WITHOUT ROWID;
                """)
    }

    /// Whether the table holds a head.
    static func holdsAny(in db: Database) throws -> Bool {
        guard try exists(in: db) else { return false }
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM removed_own_head LIMIT 1")) == true
    }
}
