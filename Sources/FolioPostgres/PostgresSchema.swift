import FolioServer
import Foundation
import PostgresNIO

/// The tables Folio keeps in PostgreSQL, as named, forward-only migrations.
///
/// `folio_schema` lists the migrations applied to the database. Opening a database applies those it lacks, in order,
/// in one transaction (all of them or none) under an advisory lock, so that several servers starting at once migrate
/// it once. A database that lists a migration this build does not know was migrated by a newer Folio, and is refused:
/// an older server must not write into a schema it does not understand.
public enum PostgresSchema {
    /// A migration: its name, recorded in `folio_schema`, and its statements, run in order.
    struct Migration {
        var name: String
        var statements: [PostgresQuery]
    }

    /// The migrations, in the order they apply. Never edit or reorder one that shipped: add another.
    static let migrations: [Migration] = [
        Migration(
            name: "1 accounts and logs",
            statements: [
                // Libraries and their accounts, tokens (only the hash of each secret), device bindings: as
                // `accounts.sqlite` holds them in a data directory.
                """
                CREATE TABLE folio_library (name text PRIMARY KEY, account text NOT NULL)
                """,
                """
                CREATE TABLE folio_token (
                    id text PRIMARY KEY, hash bytea NOT NULL UNIQUE,
                    library text NOT NULL REFERENCES folio_library (name),
                    created double precision NOT NULL, revoked double precision)
                """,
                "CREATE INDEX folio_token_revoked ON folio_token (revoked) WHERE revoked IS NOT NULL",
                "CREATE TABLE folio_device (id bytea PRIMARY KEY, library text NOT NULL)",
                // A library's log: the server's identity in it (its signing key), the next position a stored change
                // takes, and the bytes its changes and blobs take (the library's quota).
                """
                CREATE TABLE folio_log (
                    library text PRIMARY KEY, server_key bytea NOT NULL,
                    next_position bigint NOT NULL DEFAULT 1, byte_size bigint NOT NULL DEFAULT 0)
                """,
                // Every change stored, in the order stored (`position`, gapless per library: a writer takes the
                // next ones with the log's row locked), once per identity.
                """
                CREATE TABLE folio_change (
                    library text NOT NULL, position bigint NOT NULL, document bytea NOT NULL,
                    device bytea NOT NULL, seq bigint NOT NULL, hash bytea NOT NULL, encoded bytea NOT NULL,
                    PRIMARY KEY (library, position), UNIQUE (library, document, device, seq))
                """,
                // The signed heads that vouch for the changes stored with them, at the position of the last change
                // of their batch.
                """
                CREATE TABLE folio_head (
                    library text NOT NULL, position bigint NOT NULL, head bytea NOT NULL)
                """,
                "CREATE INDEX folio_head_by_position ON folio_head (library, position)",
                // The names devices gave themselves.
                """
                CREATE TABLE folio_device_name (
                    library text NOT NULL, device bytea NOT NULL, name text NOT NULL,
                    PRIMARY KEY (library, device))
                """,
                // Blobs the library's changes refer to, by SHA-256.
                """
                CREATE TABLE folio_blob (
                    library text NOT NULL, hash bytea NOT NULL, bytes bytea NOT NULL,
                    PRIMARY KEY (library, hash))
                """,
            ]),
        Migration(
            name: "2 writes in one call",
            statements: [
                // One statement's worth of a write of changes (the writer calls it in its transaction): the log's
                // row locked for the positions; a change whose identity the log holds under another hash refuses
                // the whole call (SQLSTATE FOL01); the changes the log lacks inserted at consecutive positions, in
                // the order given; the heads, each at the position of its change if a call of this write (from
                // position `heads_from`, or this call's first) stored it, else at this call's last; the library's
                // bytes counted; and, when the call took positions, a notification of `folio_changes` with the
                // last one, the writing process and the library (`POSITION:ORIGIN:LIBRARY`, see `LogFreshness`).
                // Returns the first position the call took and the next one free: equal when the log held every
                // change. The arrays of changes hold distinct identities.
                """
                CREATE FUNCTION folio_store(
                    library_name text, origin text, documents bytea[], devices bytea[], seqs bigint[], hashes bytea[],
                    encodings bytea[], head_hashes bytea[], heads bytea[], heads_from bigint)
                RETURNS TABLE (first_taken bigint, next_free bigint) LANGUAGE plpgsql AS $$
                DECLARE
                    taken bigint;
                    added bigint;
                    clash record;
                BEGIN
                    SELECT l.next_position INTO first_taken FROM folio_log l WHERE l.library = library_name FOR UPDATE;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'library % has no log', library_name USING ERRCODE = 'FOL02';
                    END IF;
                    SELECT t.device, t.seq INTO clash FROM folio_change c
                        JOIN unnest(documents, devices, seqs, hashes) AS t(document, device, seq, hash)
                        ON c.document = t.document AND c.device = t.device AND c.seq = t.seq
                        WHERE c.library = library_name AND c.hash <> t.hash LIMIT 1;
                    IF FOUND THEN
                        RAISE EXCEPTION 'library % holds another change as seq % of device %', library_name, clash.seq,
                            encode(substring(clash.device FROM 1 FOR 8), 'hex') USING ERRCODE = 'FOL01';
                    END IF;
                    WITH fresh AS (
                        SELECT t.document, t.device, t.seq, t.hash, t.encoded,
                            row_number() OVER (ORDER BY t.n) AS k
                        FROM unnest(documents, devices, seqs, hashes, encodings)
                            WITH ORDINALITY AS t(document, device, seq, hash, encoded, n)
                        WHERE NOT EXISTS (
                            SELECT 1 FROM folio_change c WHERE c.library = library_name
                            AND c.document = t.document AND c.device = t.device AND c.seq = t.seq)
                    ), inserted AS (
                        INSERT INTO folio_change (library, position, document, device, seq, hash, encoded)
                        SELECT library_name, first_taken + f.k - 1, f.document, f.device, f.seq, f.hash, f.encoded
                        FROM fresh f
                        RETURNING length(folio_change.encoded) AS size
                    )
                    SELECT count(*), coalesce(sum(i.size), 0) INTO taken, added FROM inserted i;
                    next_free := first_taken + taken;
                    heads_from := coalesce(heads_from, first_taken);
                    IF next_free > heads_from AND cardinality(heads) > 0 THEN
                        WITH written AS (
                            INSERT INTO folio_head (library, position, head)
                            SELECT library_name, coalesce(c.position, next_free - 1), h.head
                            FROM unnest(head_hashes, heads) AS h(hash, head)
                            LEFT JOIN folio_change c ON c.library = library_name AND c.position >= heads_from
                                AND c.position < next_free AND c.hash = h.hash
                            RETURNING length(folio_head.head) AS size
                        )
                        SELECT added + coalesce(sum(w.size), 0) INTO added FROM written w;
                    END IF;
                    IF taken > 0 OR added > 0 THEN
                        UPDATE folio_log SET next_position = next_free, byte_size = byte_size + added
                            WHERE library = library_name;
                    END IF;
                    IF taken > 0 THEN
                        PERFORM pg_notify('folio_changes', (next_free - 1)::text || ':' || origin || ':' || library_name);
                    END IF;
                    RETURN NEXT;
                END
                $$
                """
            ]),
        Migration(
            name: "3 revoked users",
            statements: [
                // Users of the app whose tokens (signed by the app's backend) are refused, as `accounts.sqlite`
                // holds them in a data directory.
                "CREATE TABLE folio_revoked_user (subject text PRIMARY KEY, revoked double precision NOT NULL)"
            ]),
        Migration(
            name: "4 token roles",
            statements: [
                // What each token grants in its library (LibraryRole); the tokens issued before roles write.
                "ALTER TABLE folio_token ADD COLUMN role text NOT NULL DEFAULT 'write'"
            ]),
        Migration(
            name: "5 shares",
            statements: [
                // Libraries shared with the app's users, and libraries taken offline.
                """
                CREATE TABLE folio_share (
                    library text NOT NULL, subject text NOT NULL, role text NOT NULL,
                    created double precision NOT NULL, PRIMARY KEY (library, subject))
                """,
                "CREATE INDEX folio_share_subject ON folio_share (subject)",
                "CREATE TABLE folio_offline_library (name text PRIMARY KEY, since double precision NOT NULL)",
            ]),
        Migration(
            name: "6 device people",
            statements: [
                // The person each device acts for (Device.person), '' when unknown.
                "ALTER TABLE folio_device_name ADD COLUMN person text NOT NULL DEFAULT ''"
            ]),
        Migration(
            name: "7 document shares",
            statements: [
                // Shares of single documents, in a table of their own: a server of an older build, still running
                // beside one that migrated, reads folio_share alone and so never takes a document's share for the
                // library's.
                """
                CREATE TABLE folio_document_share (
                    library text NOT NULL, subject text NOT NULL, document text NOT NULL, role text NOT NULL,
                    created double precision NOT NULL, PRIMARY KEY (library, subject, document))
                """,
                "CREATE INDEX folio_document_share_subject ON folio_document_share (subject)",
            ]),
    ]

    /// The names of the migrations this build knows, in order.
    public static var names: [String] { migrations.map(\.name) }

    /// Applies the migrations `database` lacks.
    ///
    /// - Throws: `ServerError` `storage` when the database lists a migration this build does not know (a newer
    ///   Folio's) or a migration fails (nothing of that migration stays).
    static func migrate(_ database: PostgresServerDatabase) throws {
        let logger = database.logger
        let known = names
        let applied: [String] = try database.run("migrating the schema") { client in
            try await client.withTransaction(logger: logger) { connection in
                // One migrating server at a time; the others wait here, then find the work done.
                try await connection.query("SELECT pg_advisory_xact_lock(7243917126)", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS folio_schema (
                        position integer PRIMARY KEY, name text NOT NULL UNIQUE,
                        applied timestamptz NOT NULL DEFAULT now())
                    """, logger: logger)
                var names: [String] = []
                for try await name in try await connection.query(
                    "SELECT name FROM folio_schema ORDER BY position", logger: logger
                ).decode(String.self) {
                    names.append(name)
                }
                let unknown = names.filter { !known.contains($0) }
                guard unknown.isEmpty else {
                    throw ServerError(
                        .storage,
                        "the database was migrated by a newer Folio (it lists \(unknown.map(\.debugDescription).joined(separator: ", "))): upgrade this server"
                    )
                }
                guard names == Array(known.prefix(names.count)) else {
                    throw ServerError(
                        .storage, "the database's migrations \(names) are not a prefix of this build's \(known)")
                }
                for (index, migration) in migrations.enumerated().dropFirst(names.count) {
                    for statement in migration.statements {
                        try await connection.query(statement, logger: logger)
                    }
                    let name = migration.name
                    try await connection.query(
                        "INSERT INTO folio_schema (position, name) VALUES (\(index + 1), \(name))", logger: logger)
                }
                return names
            }
        }
        if applied.count < known.count {
            database.logger.info(
                "migrated the PostgreSQL schema",
                metadata: ["applied": .string(known.dropFirst(applied.count).joined(separator: ", "))])
        }
    }
}
