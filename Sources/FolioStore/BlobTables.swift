import GRDB

/// The tables of the blobs changes refer to, made the first time a change that refers to a blob enters the store:
/// a store that never holds one (a text's) pays no page for them.
///
/// - `change_blob`: one row per change and blob it refers to (`Change.blobs`): what keeps a blob from being
///   collected, and, without a row in `blob`, a blob the store lacks. Keyed by the blob's hash first, so that
///   collection and the question whether anything refers to a blob read one range; indexed by document.
/// - `collected_blob`: blobs let go on purpose (`ChangeLogStore.collectBlobs(of:)`: only versions a resolution
///   discarded referred to them): not missing, so never asked of a peer, and refused when a peer offers them.
enum BlobTables {
    /// Whether the tables exist.
    static func exist(in db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'change_blob'"))
            == true
    }

    /// Makes the tables unless they exist.
    static func create(in db: Database) throws {
        guard try !exist(in: db) else { return }
        try db.execute(
            sql: """
                CREATE TABLE change_blob (
                    hash BLOB NOT NULL,
                    change BLOB NOT NULL,
                    document INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    PRIMARY KEY (hash, change)
                ) WITHOUT ROWID;
                CREATE INDEX change_blob_by_document ON change_blob (document);
                CREATE TABLE collected_blob (
                    hash BLOB PRIMARY KEY NOT NULL
                ) WITHOUT ROWID;
                """)
    }
}
