import FolioCore
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
            try db.execute(
                sql: """
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
        migrator.registerMigration("v3 waiting changes by dependency") { db in
            try migrateWaitingChanges(db)
        }
        migrator.registerMigration("v4 signed heads") { db in
            try db.execute(
                sql: """
                    -- Heads other devices signed whose changes are in the log, one per batch that brought them: what the
                    -- store passes on with those devices' changes, so that its peers can check them, each part of a
                    -- long reply with a head near it.
                    CREATE TABLE device_head (
                        document INTEGER NOT NULL,
                        device INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        head BLOB NOT NULL,
                        PRIMARY KEY (document, device, seq)
                    ) WITHOUT ROWID;

                    -- The signing keys of the devices the store was opened as, first one first (see
                    -- `ChangeLogStore.localIdentity`).
                    CREATE TABLE device_key (
                        id INTEGER PRIMARY KEY,
                        device INTEGER NOT NULL UNIQUE,
                        secret BLOB NOT NULL
                    );

                    -- Whether a signed head of its device reaches the waiting change (it may enter the log only then),
                    -- and the head that names the change itself, if one came with it.
                    ALTER TABLE pending ADD COLUMN vouched INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE pending ADD COLUMN head BLOB;
                    CREATE INDEX pending_by_hash ON pending (document, hash);
                    CREATE INDEX pending_unvouched ON pending (document, device, seq) WHERE vouched = 0;
                    """)
        }
        migrator.registerMigration("v5 unpublished documents") { db in
            try migrateUnpublishedDocuments(db)
        }
        migrator.registerMigration("v6 pending arrival") { db in
            try db.execute(
                sql: """
                    -- When each waiting change arrived (milliseconds since 1970, by the store's clock) and the length of
                    -- its body, so that the changes nobody vouches for are bounded in bytes and in age (`StoreLimits`).
                    -- Changes that waited before get the time of this migration.
                    ALTER TABLE pending ADD COLUMN arrived INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE pending ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
                    UPDATE pending SET arrived = CAST(strftime('%s', 'now') AS INTEGER) * 1000, size = length(body);
                    CREATE INDEX pending_unvouched_by_arrival ON pending (arrived, size) WHERE vouched = 0;

                    -- The bytes of the waiting changes nobody vouches for, across the store: one row, kept by the
                    -- triggers below in the statements that change the pending table, so that bounding them costs
                    -- no sum and holds whoever writes.
                    CREATE TABLE pending_total (
                        id INTEGER PRIMARY KEY CHECK (id = 0),
                        unvouched_bytes INTEGER NOT NULL
                    );
                    INSERT INTO pending_total (id, unvouched_bytes)
                    VALUES (0, (SELECT coalesce(sum(size), 0) FROM pending WHERE vouched = 0));
                    CREATE TRIGGER pending_unvouched_added AFTER INSERT ON pending WHEN new.vouched = 0
                    BEGIN UPDATE pending_total SET unvouched_bytes = unvouched_bytes + new.size WHERE id = 0; END;
                    CREATE TRIGGER pending_unvouched_removed AFTER DELETE ON pending WHEN old.vouched = 0
                    BEGIN UPDATE pending_total SET unvouched_bytes = unvouched_bytes - old.size WHERE id = 0; END;
                    CREATE TRIGGER pending_unvouched_vouched AFTER UPDATE OF vouched ON pending
                    WHEN old.vouched = 0 AND new.vouched <> 0
                    BEGIN UPDATE pending_total SET unvouched_bytes = unvouched_bytes - old.size WHERE id = 0; END;
                    """)
        }
        migrator.registerMigration("v7 compact segments") { db in
            try db.execute(
                sql: """
                    -- Older changes folded into immutable compact runs (`ChangeRunCodec`, docs/compact-history.md). A
                    -- segment's id is its document's row in the high 32 bits and its number in the low ones, so that a
                    -- document's segments are one range of the key. `count` is how many changes it holds; `lifecycle`
                    -- copies the canonical encodings of its lifecycle changes, which are read without the rest.
                    CREATE TABLE segment (
                        id INTEGER PRIMARY KEY,
                        count INTEGER NOT NULL,
                        lifecycle BLOB NOT NULL,
                        bytes BLOB NOT NULL
                    );

                    -- Per document and device, the highest seq that segments hold: rows at or below it are folded, and
                    -- only those may leave the change table.
                    ALTER TABLE frontier ADD COLUMN folded INTEGER NOT NULL DEFAULT 0;
                    DROP TRIGGER change_is_append_only_on_delete;
                    CREATE TRIGGER change_is_append_only_on_delete BEFORE DELETE ON change
                    WHEN old.seq > coalesce(
                        (SELECT folded FROM frontier WHERE document = old.document AND device = old.device), 0)
                    BEGIN
                        SELECT RAISE(ABORT, 'the change log is append-only: a change leaves its row only for a segment');
                    END;
                    """)
        }
        migrator.registerMigration("v8 unvouched counts") { db in
            try db.execute(
                sql: """
                    -- Per document, how many of its waiting changes nobody vouches for, kept by the triggers below in
                    -- the statements that change the pending table: bounding them (`StoreLimits`) then reads one row
                    -- rather than counting them at every arrival, which cost a device taking a long history in many
                    -- small messages time in proportion to the backlog for each.
                    ALTER TABLE document ADD COLUMN unvouched INTEGER NOT NULL DEFAULT 0;
                    UPDATE document SET unvouched = (
                        SELECT count(*) FROM pending WHERE pending.document = document.id AND pending.vouched = 0);
                    CREATE TRIGGER pending_unvouched_counted AFTER INSERT ON pending WHEN new.vouched = 0
                    BEGIN UPDATE document SET unvouched = unvouched + 1 WHERE id = new.document; END;
                    CREATE TRIGGER pending_unvouched_uncounted AFTER DELETE ON pending WHEN old.vouched = 0
                    BEGIN UPDATE document SET unvouched = unvouched - 1 WHERE id = old.document; END;
                    CREATE TRIGGER pending_unvouched_count_vouched AFTER UPDATE OF vouched ON pending
                    WHEN old.vouched = 0 AND new.vouched <> 0
                    BEGIN UPDATE document SET unvouched = unvouched - 1 WHERE id = old.document; END;
                    """)
        }
        migrator.registerMigration("v9 checkpoint manifests") { db in
            try db.execute(
                sql: """
                    -- A checkpoint of a file package may be stored as a manifest (see CheckpointManifest): its large
                    -- files as blobs of their own, shared by every checkpoint and document that holds them. NULL: the
                    -- contents are the blob named by contents_hash, whole.
                    ALTER TABLE checkpoint ADD COLUMN manifest_hash BLOB;

                    -- The files a checkpoint's manifest names, so that the blobs of a checkpoint dropped when a newer
                    -- one replaces it go once nothing else names them.
                    CREATE TABLE checkpoint_file (
                        checkpoint INTEGER NOT NULL,
                        hash BLOB NOT NULL,
                        PRIMARY KEY (checkpoint, hash)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v10 segment seqs") { db in try migrateSegmentSeqs(db) }
        migrator.registerMigration("v11 device people") { db in
            // The person a device acts for (`Device.person`), '' when unknown.
            try db.execute(sql: "ALTER TABLE device ADD COLUMN person TEXT NOT NULL DEFAULT ''")
        }
        migrator.registerMigration("v12 removed local copies") { db in
            try db.execute(
                sql: """
                    -- The highest segment number a removed local copy of the document used: its segments when it comes
                    -- back are numbered above it, so that no segment id names two contents (a reader's cache trusts
                    -- ids).
                    ALTER TABLE document ADD COLUMN segment_floor INTEGER NOT NULL DEFAULT 0;
                    """)
            // The heads kept for removed local copies have a table made with the first removal
            // (`RemovedOwnHeadTable`): a store that never removes one pays no page for it.
        }
        migrator.registerMigration("v13 head spans") { db in
            try db.execute(
                sql: """
                    -- Which span of the document's history a kept head falls in: the number of changes its change
                    -- knows (its own and those before it) divided by `ChangeLogStore.headSpan`. A store keeps the latest
                    -- head of each device per span, so that the heads it keeps of all devices at a span's end vouch
                    -- for one another. NULL for heads kept before (one per 256 sequence numbers of their device).
                    ALTER TABLE device_head ADD COLUMN span INTEGER;
                    """)
        }
        return migrator
    }

    /// Gives every segment its seqs (`SegmentSeqs`): the table is written again with the column before the
    /// segment's bytes, so that the seqs of a segment of a few devices are read without its bytes, and each segment
    /// is decoded alone, by the stamps it carries, one at a time, to fill it. A segment that does not decode alone
    /// keeps none (readers then read the document's segments in order; `verify` reports it).
    private static func migrateSegmentSeqs(_ db: Database) throws {
        try db.execute(
            sql: """
                -- `seqs`: per device, the lowest and highest seq of its changes the segment holds (SegmentSeqs), so
                -- that a reader finds the segment holding a change without decoding the segments before it.
                CREATE TABLE segment_v10 (
                    id INTEGER PRIMARY KEY,
                    count INTEGER NOT NULL,
                    seqs BLOB,
                    lifecycle BLOB NOT NULL,
                    bytes BLOB NOT NULL
                );
                INSERT INTO segment_v10 (id, count, lifecycle, bytes) SELECT id, count, lifecycle, bytes FROM segment;
                DROP TABLE segment;
                ALTER TABLE segment_v10 RENAME TO segment;
                """)
        let update = try db.makeStatement(sql: "UPDATE segment SET seqs = ? WHERE id = ?")
        var documents: [(row: Int64, id: DocumentID)] = []
        var rows = try RawRows(
            db.makeStatement(sql: "SELECT DISTINCT d.id, d.uuid FROM document d JOIN segment s ON s.id >> 32 = d.id"),
            arguments: [])
        while let row = try rows.next() {
            guard let uuid = try? ColumnDecoder.uuid(row[1]) else { continue }
            documents.append((row[0], DocumentID(uuid)))
        }
        let segments = try db.makeStatement(sql: "SELECT id, bytes FROM segment WHERE id BETWEEN ? AND ? ORDER BY id")
        for document in documents {
            let range = ChangeLogStore.segmentRange(of: document.row)
            var filled: [(id: Int64, seqs: Data)] = []
            var rows = try RawRows(segments, arguments: [range.lowerBound, range.upperBound])
            while let row = try rows.next() {
                guard
                    let changes = try? ChangeRunCodec.decode(
                        row[1] as Data, document: document.id, outside: { _ in nil })
                else { continue }
                filled.append((row[0], SegmentSeqs(changes).encoded))
            }
            for segment in filled { try update.execute(arguments: [segment.seqs, segment.id]) }
        }
    }

    /// Creates the table of the documents this device keeps to itself (see
    /// ``UnpublishedDocuments/documents()``) and fills it with the documents whose container, as their lifecycle
    /// sets it, is `local`: a store written before the table existed published every document, and from now on a
    /// document in `local` stays on the device.
    private static func migrateUnpublishedDocuments(_ db: Database) throws {
        try db.execute(
            sql: """
                -- The documents whose changes this device neither announces nor sends, nor takes from peers: those it
                -- put in its local container. Never synced; small, read whole once per sync.
                CREATE TABLE unpublished (
                    document INTEGER PRIMARY KEY NOT NULL
                );
                """)
        var lifecycles: [Int64: [Change]] = [:]
        for row in try Row.fetchAll(
            db,
            sql: "SELECT c.document, d.uuid, c.body FROM change c JOIN document d ON d.id = c.document WHERE c.kind = 1"
        ) {
            let documentRow: Int64 = row[0]
            let document = DocumentID(try ColumnDecoder.uuid(row[1]))
            let body = try StorageCompression.unpackBody(row[2])
            // A change the log holds decoded when it entered; one that no longer does is left to `verify`.
            guard let change = try? Change(checking: body, document: document) else { continue }
            lifecycles[documentRow, default: []].append(change)
        }
        let insert = try db.makeStatement(sql: "INSERT INTO unpublished (document) VALUES (?)")
        for documentRow in lifecycles.keys.sorted()
        where latestContainer(in: lifecycles[documentRow]!) == .local {
            try insert.execute(arguments: [documentRow])
        }
    }

    /// The container a document's lifecycle changes put it in, as the library folds them: its first create (by
    /// lamport, then identity) and its moves set it; of those no other one happened after, the latest by wall time,
    /// lamport and device wins. `nil` without a create.
    static func latestContainer(in lifecycle: [Change]) -> DocumentContainer? {
        let creation = lifecycle.filter {
            if case .lifecycle(.create) = $0.kind { true } else { false }
        }.min { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
        guard let creation else { return nil }
        let setters = lifecycle.filter {
            if case .lifecycle(.move) = $0.kind { true } else { $0.hash == creation.hash }
        }
        let maximal = setters.filter { candidate in
            !setters.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) }
        }
        let latest = maximal.max { ($0.wallTime, $0.lamport, $0.id.device) < ($1.wallTime, $1.lamport, $1.id.device) }
        switch latest?.kind {
        case .lifecycle(.create(_, _, let container)), .lifecycle(.move(let container)): return container
        default: return nil
        }
    }

    /// Makes the pending table say, for each waiting change, one change it waits for (so that an arriving change
    /// re-examines only the changes that wait for it), and lets changes with one identity wait side by side (so
    /// that one made up and parked first cannot keep out the real one).
    private static func migrateWaitingChanges(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE pending_by_dependency (
                    document INTEGER NOT NULL,
                    device INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    body BLOB NOT NULL,
                    -- One change the waiting one depends on that is not in the log: its device's identity and seq.
                    wait_device BLOB NOT NULL,
                    wait_seq INTEGER NOT NULL,
                    PRIMARY KEY (document, device, seq, hash)
                ) WITHOUT ROWID;
                """)
        var vectors: [Int64: [Data: Int64]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT f.document, d.uuid, f.seq FROM frontier f JOIN device d ON d.id = f.device")
        {
            vectors[row[0], default: [:]][row[1]] = row[2]
        }
        let insert = try db.makeStatement(
            sql: """
                INSERT INTO pending_by_dependency (document, device, seq, hash, body, wait_device, wait_seq)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        for row in try Row.fetchAll(
            db,
            sql:
                "SELECT p.document, p.device, d.uuid, p.seq, p.hash, p.body FROM pending p JOIN device d ON d.id = p.device"
        ) {
            let documentRow: Int64 = row[0]
            let uuid: Data = row[2]
            let seq: Int64 = row[3]
            let vector = vectors[documentRow] ?? [:]
            // The device's previous change, unless the log has it; then the first other entry the log lacks. A
            // change that lacks nothing (which `verify` reports) waits for its own previous change.
            var wait: (Data, Int64) = (uuid, seq - 1)
            if (vector[uuid] ?? 0) >= seq - 1,
                let body = row[5] as Data?,
                let entries = try? decodedVectorEntries(body),
                let missing = entries.first(where: { $0.device != uuid && $0.seq > (vector[$0.device] ?? 0) })
            {
                wait = (missing.device, missing.seq)
            }
            try insert.execute(arguments: [documentRow, row[1], seq, row[4], row[5], wait.0, wait.1])
        }
        try db.execute(
            sql: """
                DROP TABLE pending;
                ALTER TABLE pending_by_dependency RENAME TO pending;
                CREATE INDEX pending_by_dependency ON pending (document, wait_device, wait_seq);
                -- How many of the document's changes wait, kept with the table so that bounding it costs no count.
                ALTER TABLE document ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;
                UPDATE document SET waiting = (SELECT count(*) FROM pending WHERE pending.document = document.id);
                """)
    }

    /// The vector entries of a change's encoding, by device identity bytes.
    private static func decodedVectorEntries(_ body: Data) throws -> [(device: Data, seq: Int64)] {
        // The document's identity only enters the hash, which is not needed here.
        let change = try Change(checking: body, document: DocumentID(UUIDBytes(high: 0, low: 0)))
        return change.vector.entries.map { ($0.device.uuid.data, Int64($0.seq)) }
    }

    /// The page size of new stores.
    static let pageSize = 1024

    /// The bytes of a new store's file, every migration applied and in WAL mode, made once per process in memory:
    /// a new store starts as a copy of them rather than running its migrations (which costs more than the copy).
    /// `nil` if SQLite cannot serialize a database, in which case new stores migrate from scratch.
    static let pristineImage: Data? = {
        _ = ChangeLogStore.sqliteSettings
        // Small pages, so that a small document's store is small (every table and index takes a page at least), and
        // free pages given back to the file system when a fold empties them.
        guard let queue = try? DatabaseQueue(),
            (try? queue.writeWithoutTransaction({ db in
                try db.execute(sql: "PRAGMA page_size = \(pageSize); PRAGMA auto_vacuum = INCREMENTAL")
            })) != nil,
            (try? migrator.migrate(queue)) != nil
        else { return nil }
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
