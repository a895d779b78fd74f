import Foundation
import GRDB
import GRDBSQLite

/// The store's tables, created by named, forward-only migrations. A migration that has shipped is never edited:
/// changes to the schema are new migrations appended here.
enum StoreSchema {
    /// The value of `folio_meta.format` that marks a file as a Folio store.
    static let formatMarker = "folio-store"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 change log") { db in
            try db.execute(sql: """
                CREATE TABLE folio_meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO folio_meta (key, value) VALUES ('format', '\(formatMarker)');

                -- Devices and documents get small local numbers so that log rows stay compact.
                CREATE TABLE device (
                    id INTEGER PRIMARY KEY,
                    uuid BLOB NOT NULL UNIQUE,
                    name TEXT
                );
                CREATE TABLE document (
                    id INTEGER PRIMARY KEY,
                    uuid BLOB NOT NULL UNIQUE
                );

                -- The log. `body` is the change's canonical encoding; `hash` is SHA-256(document uuid ‖ body);
                -- `kind` is the kind's tag (0 edit, 1 lifecycle, 2 baseline, 3 resolution), so that the few
                -- lifecycle changes can be read without the edits.
                CREATE TABLE change (
                    document INTEGER NOT NULL,
                    device INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    lamport INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    hash_key INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    body BLOB NOT NULL,
                    PRIMARY KEY (document, device, seq)
                ) WITHOUT ROWID;
                CREATE INDEX change_by_hash ON change (document, hash_key);
                CREATE INDEX change_lifecycle ON change (document) WHERE kind = 1;
                CREATE TRIGGER change_is_append_only_on_update BEFORE UPDATE ON change
                BEGIN SELECT RAISE(ABORT, 'the change log is append-only: a change is never updated'); END;
                CREATE TRIGGER change_is_append_only_on_delete BEFORE DELETE ON change
                BEGIN SELECT RAISE(ABORT, 'the change log is append-only: a change is never deleted'); END;

                -- Changes that arrived before their dependencies; moved to `change` once those arrive.
                CREATE TABLE pending (
                    document INTEGER NOT NULL,
                    device INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    body BLOB NOT NULL,
                    PRIMARY KEY (document, device, seq)
                ) WITHOUT ROWID;

                -- Per document and device: the latest change (the document's vector entry) and whether it is a
                -- head. Derived from the log in the same transaction as every append; `verify` recomputes it.
                CREATE TABLE frontier (
                    document INTEGER NOT NULL,
                    device INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    lamport INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    is_head INTEGER NOT NULL,
                    PRIMARY KEY (document, device)
                ) WITHOUT ROWID;

                CREATE TABLE blob (
                    hash BLOB PRIMARY KEY NOT NULL,
                    bytes BLOB NOT NULL
                );

                -- Snapshots of a document's state at a vector, so that opening costs the tail of the log.
                CREATE TABLE checkpoint (
                    id INTEGER PRIMARY KEY,
                    document INTEGER NOT NULL,
                    vector BLOB NOT NULL,
                    change_count INTEGER NOT NULL,
                    contents_hash BLOB NOT NULL,
                    created_at INTEGER NOT NULL
                );
                CREATE INDEX checkpoint_by_document ON checkpoint (document, change_count);

                -- This device's own bookkeeping per document (where its file was written, its undo stack…):
                -- not part of the log, never synced, written in the same transactions as the changes it follows.
                CREATE TABLE local_state (
                    document INTEGER NOT NULL,
                    key TEXT NOT NULL,
                    value BLOB NOT NULL,
                    PRIMARY KEY (document, key)
                ) WITHOUT ROWID;

                -- What a peer is known to have, per document: where the next sync with it starts.
                CREATE TABLE sync_cursor (
                    peer TEXT NOT NULL,
                    document INTEGER NOT NULL,
                    vector BLOB NOT NULL,
                    PRIMARY KEY (peer, document)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v2 resolution index") { db in
            // Resolutions are read to list what conflicts discarded (the loss ledger), without the edits.
            try db.execute(sql: "CREATE INDEX change_resolution ON change (document) WHERE kind = 3")
        }
        return migrator
    }

    /// The bytes of a new store's file, every migration applied and in WAL mode, made once per process in memory:
    /// a new store starts as a copy of them rather than running its migrations (which costs more than the copy).
    /// `nil` if SQLite cannot serialize a database, in which case new stores migrate from scratch.
    static let pristineImage: Data? = {
        _ = ChangeLogStore.sqliteSettings
        guard let queue = try? DatabaseQueue(), (try? migrator.migrate(queue)) != nil else { return nil }
        return queue.inDatabase { db -> Data? in
            var size: sqlite3_int64 = 0
            guard let bytes = sqlite3_serialize(db.sqliteConnection, "main", &size, 0) else { return nil }
            defer { sqlite3_free(bytes) }
            var image = Data(bytes: bytes, count: Int(size))
            // The file format's read and write versions (header bytes 18 and 19) say WAL mode, which every store
            // uses: a new store opens in it, rather than being switched to it through a rollback journal.
            guard image.count >= 100, image[18] == 1, image[19] == 1 else { return nil }
            image[18] = 2
            image[19] = 2
            return image
        }
    }()
}
