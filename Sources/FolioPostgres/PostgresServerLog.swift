import FolioCore
import FolioServer
import FolioStore
import FolioSync
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A library's log in PostgreSQL, shared by every server process of the database (see `docs/postgres.md`).
///
/// PostgreSQL holds the log: every change stored, in the order stored (a gapless position per library), with the
/// signed heads that vouch for it, the library's blobs, the devices' names and the server's identity in the library.
/// Each process keeps a copy of the log in a SQLite file of its own (`SQLiteServerLog`, in its data directory's
/// `cache/`), which checks arriving changes exactly as a device checks them and answers reads; the copy is brought up
/// to date from PostgreSQL before a call when PostgreSQL may hold more (`LogFreshness`; before every call when the
/// log has none) and may be deleted at any time: it is rebuilt from PostgreSQL. A change is acknowledged only once its transaction in PostgreSQL committed: an ingest
/// checks the changes in the copy, then writes those it took to PostgreSQL in one transaction, the log's row locked
/// for the positions (no lock is held across the network). When that transaction fails, the copy, which took changes
/// PostgreSQL lacks, is thrown away and rebuilt at the next call, and the ingest fails (`ServerError` `storage`):
/// nothing is acknowledged that PostgreSQL does not hold.
public final class PostgresServerLog: ServerLog {
    /// The library.
    public let library: String
    let database: PostgresServerDatabase
    private let cacheURL: URL
    private let key: DeviceKey
    private let state: Mutex<State>
    /// What tells the copy whether PostgreSQL may hold more than it read (`nil`: ask it before every read).
    private let freshness: LogFreshness?
    /// What `freshness` heard of this library.
    private let notices: LogFreshness.Notices?

    private struct State {
        /// The copy, `nil` after it was thrown away.
        var copy: SQLiteServerLog?
        /// The highest position of PostgreSQL's log that the copy holds.
        var position: Int64 = 0
        /// The documents the copy took changes of from PostgreSQL (other processes' work) since ``catchUp()`` last
        /// reported, with their vectors before: whichever call read them, they are passed on to the devices.
        var grown: [DocumentID: VersionVector] = [:]
        /// What the copy's last read of PostgreSQL was current with (see `LogFreshness`); `nil` when the next read
        /// must ask PostgreSQL.
        var readMark: LogFreshness.Mark?
    }

    /// Throws the copy away: it may hold what PostgreSQL lacks. The next call rebuilds it.
    private func discardCopy(_ state: inout State) {
        state.copy = nil
        state.position = 0
        state.grown = [:]
        state.readMark = nil
        Self.removeCopy(at: cacheURL)
    }

    /// How many changes one read of PostgreSQL brings to the copy at most.
    static let catchUpBatch = 4_096
    /// How many bytes of changes one read brings at most (past its first change, which comes whatever its size).
    static let catchUpBytes = 16 << 20

    /// Opens the log of `library` in `database`, creating it (with a new server identity) when it is new, with its
    /// copy in `cacheDirectory`.
    ///
    /// - Throws: `ServerError` `storage`.
    public convenience init(library: String, database: PostgresServerDatabase, cacheDirectory: URL) throws {
        try self.init(library: library, database: database, cacheDirectory: cacheDirectory, freshness: nil)
    }

    /// Opens the log as ``init(library:database:cacheDirectory:)`` does, its copy asking PostgreSQL before a read
    /// only when `freshness` says it may hold more.
    init(library: String, database: PostgresServerDatabase, cacheDirectory: URL, freshness: LogFreshness?) throws {
        self.library = library
        self.database = database
        self.freshness = freshness
        notices = freshness?.watch(library)
        let logger = database.logger
        let made = DeviceKey().rawRepresentation
        let stored: Data = try database.run("opening the log of library \(library)") { client in
            try await client.query(
                "INSERT INTO folio_log (library, server_key) VALUES (\(library), \(made)) ON CONFLICT DO NOTHING",
                logger: logger)
            for try await key in try await client.query(
                "SELECT server_key FROM folio_log WHERE library = \(library)", logger: logger
            ).decode(Data.self) {
                return key
            }
            throw ServerError(.storage, "the log of library \(library) vanished while it was opened")
        }
        do { key = try DeviceKey(rawRepresentation: stored) } catch {
            throw ServerError(.storage, "the server key of library \(library) in PostgreSQL is damaged", cause: error)
        }
        do {
            try FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
        } catch {
            throw ServerError(.storage, "cannot create the cache directory \(cacheDirectory.path)", cause: error)
        }
        cacheURL = cacheDirectory.appendingPathComponent(ServerDataDirectory.libraryFileName(library))
        // A copy left by an earlier run may hold what PostgreSQL does not (a process killed between the two
        // commits): it starts again.
        Self.removeCopy(at: cacheURL)
        state = Mutex(State())
    }

    /// See `ServerLog/device`.
    public var device: Device { key.device(named: "server") }

    // MARK: Reads, from the copy brought up to date

    /// See `ServerLog/summary()`.
    public func summary() throws -> ServerLogSummary {
        var summary = try current { try $0.summary() }
        // The devices named in PostgreSQL (by whichever process), and the server itself, as a SQLite log lists them.
        summary.devices = (try deviceNames() + [device]).sorted { $0.id < $1.id }
        return summary
    }

    /// See `ServerLog/changes(of:since:)`.
    public func changes(of document: DocumentID, since: VersionVector) throws -> (
        changes: [EncodedChange], heads: [SignedHead]
    ) {
        try current { try $0.changes(of: document, since: since) }
    }

    /// See `ServerLog/vector(of:)`.
    public func vector(of document: DocumentID) throws -> VersionVector {
        try current { try $0.vector(of: document) }
    }

    /// See `ServerLog/contains(_:of:)`.
    public func contains(_ head: ChangeHash, of document: DocumentID) throws -> Bool {
        try current { try $0.contains(head, of: document) }
    }

    /// See `ServerLog.change(_:of:)`, by hash.
    public func change(_ hash: ChangeHash, of document: DocumentID) throws -> Change? {
        try current { try $0.change(hash, of: document) }
    }

    /// See `ServerLog.change(_:of:)`, by identity.
    public func change(_ id: ChangeID, of document: DocumentID) throws -> Change? {
        try current { try $0.change(id, of: document) }
    }

    /// See `ServerLog/waitingChanges(of:)`: those waiting in this process's copy (a change that waits is not yet
    /// acknowledged, and a device sends it again to whichever process it reaches).
    public func waitingChanges(of document: DocumentID) throws -> [Change] {
        try current { try $0.waitingChanges(of: document) }
    }

    /// See `ServerLog/byteSize()`: the bytes of the library's changes, heads and blobs in PostgreSQL.
    public func byteSize() throws -> Int {
        let library = self.library
        let logger = database.logger
        return try database.run("measuring library \(library)") { client in
            for try await size in try await client.query(
                "SELECT byte_size FROM folio_log WHERE library = \(library)", logger: logger
            ).decode(Int64.self) {
                return Int(size)
            }
            return 0
        }
    }

    /// See `ServerLog/catchUp()`: what the copy read from PostgreSQL since the last report, whichever call read it.
    /// What a copy takes when it is built (or rebuilt, after it was thrown away) is not reported: the devices take
    /// what they lack by their own sync.
    public func catchUp() throws -> [DocumentID: VersionVector] {
        try state.withLock { state in
            let copy = try upToDate(&state)
            defer { state.grown = [:] }
            var grown = state.grown
            for (document, before) in grown where try copy.vector(of: document) == before {
                grown[document] = nil
            }
            return grown
        }
    }

    // MARK: Writes

    /// See `ServerLog/ingest(_:heads:)`: checked in the copy, then stored in PostgreSQL in one transaction before
    /// this returns.
    public func ingest(_ changes: [EncodedChange], heads: [SignedHead]) throws -> IngestResult {
        try state.withLock { state in
            let copy = try upToDate(&state)
            let documents = Set(changes.map(\.change.document)).sorted()
            var before: [DocumentID: VersionVector] = [:]
            for document in documents { before[document] = try copy.vector(of: document) }
            let result = try copy.ingest(changes, heads: heads)
            guard !result.updatedDocuments.isEmpty else { return result }
            do {
                // What the copy took (with the changes that waited for them), and the heads that vouch for it.
                let taken = try Self.taken(by: copy, in: result.updatedDocuments, since: before)
                let position = try write(taken.changes, heads: taken.heads, after: state.position)
                // Another process wrote since the copy's position: its changes are read at the next call.
                if position == state.position, !taken.changes.isEmpty { state.readMark = nil }
                state.position = position
            } catch {
                // The copy holds changes PostgreSQL may lack: it goes, and is rebuilt at the next call.
                discardCopy(&state)
                throw error
            }
            return result
        }
    }

    /// See `ServerLog/name(_:)`.
    public func name(_ device: Device) throws {
        guard device.id != self.device.id else { return }
        let library = self.library
        let id = Data(device.id.uuid.bytes)
        let name = device.name
        let person = device.person
        let logger = database.logger
        try database.run("naming device \(device.id) in library \(library)") { client in
            try await client.query(
                """
                INSERT INTO folio_device_name (library, device, name, person)
                VALUES (\(library), \(id), \(name), \(person))
                ON CONFLICT (library, device) DO UPDATE SET name = excluded.name,
                    person = CASE WHEN excluded.person = '' THEN folio_device_name.person ELSE excluded.person END
                """, logger: logger)
        }
    }

    /// Stores `changes` and `heads` in PostgreSQL in one transaction, after the changes it holds, and returns the
    /// position the copy holds after it: the last one written when nobody wrote since `position`, else `position`
    /// (the next call reads what others wrote, and these again, as duplicates).
    ///
    /// The write is a transaction of one call of `folio_store` (`PostgresSchema`) for each statement's worth of changes
    /// (`StoredRows`: at most 1,000 rows and 32 MiB), the heads with the last: three round trips for a write of up to
    /// 1,000 changes. It returns once PostgreSQL has answered the `COMMIT` (a statement outside an explicit transaction
    /// answers before its commit, which may still fail). The call may take 1 s more than the database's timeout for
    /// every 16 MiB written.
    ///
    /// `changes` are what the copy took, so each identity comes once (`folio_store` relies on it).
    ///
    /// - Throws: `ServerError` `storage`; `StoreError` `integrity` when PostgreSQL holds another change under one of
    ///   these identities (another process took it first); nothing is stored then.
    private func write(_ changes: [EncodedChange], heads: [SignedHead], after position: Int64) throws -> Int64 {
        guard !changes.isEmpty else { return position }
        let library = self.library
        let origin = freshness?.origin ?? ""
        let logger = database.logger
        let rows = StoredRows(changes)
        let headHashes = heads.map { ByteBuffer(bytes: $0.hash.bytes) }
        let headBytes = heads.map { ByteBuffer(bytes: $0.encoded()) }
        let chunks = rows.chunks
        let allowed = database.timeout + .seconds(rows.byteCount / (16 << 20))
        // One call of `folio_store`: the first position it took and the next one free.
        @Sendable func store(_ chunk: ArraySlice<Int>, headsFrom: Int64?, on connection: PostgresConnection)
            async throws -> (first: Int64, next: Int64)
        {
            let picked = rows.picking(chunk)
            let last = chunk.endIndex == rows.indices.endIndex
            let (hashes, bytes) = last ? (headHashes, headBytes) : ([], [])
            var positions: [(first: Int64, next: Int64)] = []
            do {
                for try await row in try await connection.query(
                    """
                    SELECT first_taken, next_free FROM folio_store(\(library), \(origin), \(picked.documents),
                        \(picked.devices), \(picked.seqs), \(picked.hashes), \(picked.encoded), \(hashes), \(bytes),
                        \(headsFrom))
                    """, logger: logger
                ).decode((Int64, Int64).self) {
                    positions.append(row)
                }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "FOL01" {
                throw StoreError(
                    .integrity, "\(error.serverInfo?[.message] ?? "an identity reused"); nothing was stored")
            }
            guard positions.count == 1 else {
                throw ServerError(.storage, "storing changes of library \(library) returned \(positions.count) rows")
            }
            return positions[0]
        }
        let (first, next) = try database.run(
            "storing \(changes.count) changes of library \(library)", timeout: allowed
        ) { client in
            try await client.withTransaction(logger: logger) { connection in
                let (first, next) = try await store(chunks[0], headsFrom: nil, on: connection)
                var last = next
                for chunk in chunks.dropFirst() { last = try await store(chunk, headsFrom: first, on: connection).next }
                return (first, last)
            }
        }
        return first == position + 1 ? next - 1 : position
    }

    // MARK: Blobs, in PostgreSQL

    /// See `ServerLog/blobs(_:)`.
    public func blobs(_ references: [BlobReference]) throws -> [BlobReference: Data] {
        guard !references.isEmpty else { return [:] }
        let library = self.library
        let logger = database.logger
        let hashes = references.map { $0.hash.hex }
        let found: [(Data, Data)] = try database.run("reading blobs of library \(library)") { client in
            var found: [(Data, Data)] = []
            for try await row in try await client.query(
                """
                SELECT hash, bytes FROM folio_blob WHERE library = \(library)
                AND hash IN (SELECT decode(h, 'hex') FROM unnest(\(hashes)::text[]) h)
                """,
                logger: logger
            ).decode((Data, Data).self) {
                found.append(row)
            }
            return found
        }
        var byHash: [Data: Data] = [:]
        for (hash, bytes) in found { byHash[hash] = bytes }
        var result: [BlobReference: Data] = [:]
        for reference in references {
            guard let bytes = byHash[Data(reference.hash.bytes)], bytes.count == reference.size,
                BlobReference(to: bytes) == reference
            else { continue }
            result[reference] = bytes
        }
        return result
    }

    /// See `ServerLog/lacking(_:)`.
    public func lacking(_ references: [BlobReference]) throws -> [BlobReference] {
        let held = try heldBlobs(references.map(\.hash))
        return references.filter { !held.contains($0.hash) }
    }

    /// See `ServerLog/missingBlobs(limit:)`: those the copy lacks and PostgreSQL lacks too.
    public func missingBlobs(limit: Int) throws -> [BlobReference] {
        // The copy lacks every blob (it takes none from PostgreSQL): of what it lacks, PostgreSQL's are left out, a
        // part at a time, until `limit` are found or `missingBlobsScanned` were looked at.
        let candidates = try current { try $0.missingBlobs(limit: Self.missingBlobsScanned) }
        var missing: [BlobReference] = []
        for start in stride(from: 0, to: candidates.count, by: SyncMessage.Limits.wantedBlobs) {
            let part = Array(candidates[start..<min(start + SyncMessage.Limits.wantedBlobs, candidates.count)])
            let held = try heldBlobs(part.map(\.hash))
            missing += part.filter { !held.contains($0.hash) }
            if missing.count >= limit { break }
        }
        return Array(missing.prefix(limit))
    }

    /// See `ServerLog/blobs(_:referencedBy:)`: the copy holds every change, so it knows what each refers to.
    public func blobs(_ references: [BlobReference], referencedBy documents: [DocumentID]) throws -> Set<BlobReference>
    {
        try current { try $0.blobs(references, referencedBy: documents) }
    }

    /// How many of the blobs the copy lacks ``missingBlobs(limit:)`` looks at, at most.
    static let missingBlobsScanned = 65_536

    /// See `ServerLog/storeBlobs(_:)`: checked against the changes of the copy, then stored in PostgreSQL.
    public func storeBlobs(_ blobs: [Data]) throws -> BlobIntake {
        try state.withLock { state in
            let intake = try upToDate(&state).storeBlobs(blobs)
            // Every blob a change refers to, stored now or before (a copy that took one PostgreSQL then failed to
            // store is thrown away, but a blob another process stored is in PostgreSQL already: no harm in both).
            let refused = Set(intake.refused)
            var seen = Set<BlobReference>()
            let rows = blobs.compactMap { bytes -> (Data, Data)? in
                let reference = BlobReference(to: bytes)
                guard !refused.contains(reference), seen.insert(reference).inserted else { return nil }
                return (Data(reference.hash.bytes), bytes)
            }
            guard !rows.isEmpty else { return intake }
            let library = self.library
            let logger = database.logger
            do {
                try database.run("storing blobs of library \(library)") { client in
                    try await client.withTransaction(logger: logger) { connection in
                        var added: Int64 = 0
                        for (hash, bytes) in rows {
                            for try await _ in try await connection.query(
                                """
                                INSERT INTO folio_blob (library, hash, bytes) VALUES (\(library), \(hash), \(bytes))
                                ON CONFLICT DO NOTHING RETURNING hash
                                """, logger: logger)
                            {
                                added += Int64(bytes.count)
                            }
                        }
                        try await connection.query(
                            "UPDATE folio_log SET byte_size = byte_size + \(added) WHERE library = \(library)",
                            logger: logger)
                    }
                }
            } catch {
                discardCopy(&state)
                throw error
            }
            return intake
        }
    }

    private func heldBlobs(_ hashes: [ContentHash]) throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        let library = self.library
        let logger = database.logger
        let keys = hashes.map(\.hex)
        let held: [Data] = try database.run("looking up blobs of library \(library)") { client in
            var held: [Data] = []
            for try await hash in try await client.query(
                """
                SELECT hash FROM folio_blob WHERE library = \(library)
                AND hash IN (SELECT decode(h, 'hex') FROM unnest(\(keys)::text[]) h)
                """, logger: logger
            ).decode(Data.self) {
                held.append(hash)
            }
            return held
        }
        let set = Set(held)
        return Set(hashes.filter { set.contains(Data($0.bytes)) })
    }

    // MARK: The copy

    /// Runs `body` with the copy brought up to date.
    private func current<T>(_ body: (SQLiteServerLog) throws -> T) throws -> T {
        try state.withLock { state in try body(try upToDate(&state)) }
    }

    /// The copy, opened (rebuilt from PostgreSQL) when there is none, with every change PostgreSQL stored since it was
    /// last brought up to date. The rows were checked by the process that wrote them (as a device checks changes),
    /// so the copy takes them as they are, with the heads stored with them, in the order stored (an order in which
    /// every change follows its parents). A change that waited in the copy (for a parent another process stored)
    /// and enters with them is written to PostgreSQL in turn. A catch-up that leaves a stored change out throws
    /// away the copy and fails: the copy must hold exactly what PostgreSQL holds.
    private func upToDate(_ state: inout State) throws -> SQLiteServerLog {
        let copy: SQLiteServerLog
        let building: Bool
        if let existing = state.copy {
            copy = existing
            building = false
        } else {
            Self.removeCopy(at: cacheURL)
            copy = try SQLiteServerLog(at: cacheURL, key: key)
            state.copy = copy
            state.position = 0
            building = true
        }
        // Taken before the read: a notification that arrives during it makes the next call read again.
        let mark = notices.flatMap { freshness?.mark(of: $0) }
        if !building, let mark, mark.isHeld(by: state.readMark, upTo: state.position) { return copy }
        state.readMark = nil
        do {
            while true {
                let batch = try read(after: state.position)
                guard let last = batch.last else {
                    state.readMark = mark
                    return copy
                }
                var before: [DocumentID: VersionVector] = [:]
                for document in Set(batch.changes.map(\.change.document)) {
                    before[document] = try copy.vector(of: document)
                    if !building, state.grown[document] == nil { state.grown[document] = before[document] }
                }
                let result = try copy.ingest(trusting: batch.changes, keeping: batch.heads)
                let taken = result.applied.count + result.duplicates
                guard taken >= batch.changes.count else {
                    throw ServerError(
                        .storage,
                        "library \(library): \(batch.changes.count - taken) changes PostgreSQL holds after position \(state.position) do not enter the server's copy"
                    )
                }
                state.position = last
                // Changes that waited in the copy and entered with these: PostgreSQL lacks them.
                if taken > batch.changes.count {
                    let read = Set(batch.changes.map(\.change.hash))
                    let taken = try Self.taken(by: copy, in: result.updatedDocuments, since: before)
                    let released = taken.changes.filter { !read.contains($0.change.hash) }
                    let position = try write(released, heads: taken.heads, after: state.position)
                    // Another process wrote meanwhile: read on.
                    if position == state.position, !released.isEmpty { continue }
                    state.position = position
                }
                if !batch.more {
                    state.readMark = mark
                    return copy
                }
            }
        } catch {
            discardCopy(&state)
            throw error
        }
    }

    /// What the copy holds of `documents` beyond their vectors `before`, with the heads that vouch for it.
    private static func taken(
        by copy: SQLiteServerLog, in documents: [DocumentID], since before: [DocumentID: VersionVector]
    ) throws -> (changes: [EncodedChange], heads: [SignedHead]) {
        var changes: [EncodedChange] = []
        var heads: [SignedHead] = []
        for document in documents {
            let taken = try copy.changes(of: document, since: before[document] ?? VersionVector())
            changes += taken.changes
            heads += taken.heads
        }
        return (changes, heads)
    }

    /// The changes PostgreSQL holds after `position` (at most `catchUpBatch`), with the heads stored with them.
    private func read(after position: Int64) throws -> (
        changes: [EncodedChange], heads: [SignedHead], last: Int64?, more: Bool
    ) {
        let library = self.library
        let logger = database.logger
        let limit = Self.catchUpBatch
        let bytes = Int64(Self.catchUpBytes)
        let rows: (changes: [(Int64, Data, Data)], heads: [Data]) = try database.run(
            "reading the log of library \(library)"
        ) { client in
            var changes: [(Int64, Data, Data)] = []
            // At most `limit` changes and, past the first, `bytes` bytes of them: the running total is computed by
            // the database, so that no more is sent.
            for try await row in try await client.query(
                """
                SELECT position, document, encoded FROM (
                    SELECT position, document, encoded,
                        sum(length(encoded)) OVER (ORDER BY position) - length(encoded) AS before
                    FROM folio_change WHERE library = \(library) AND position > \(position)
                    ORDER BY position LIMIT \(limit)
                ) AS part WHERE before < \(bytes) ORDER BY position
                """, logger: logger
            ).decode((Int64, Data, Data).self) {
                changes.append(row)
            }
            var heads: [Data] = []
            if let last = changes.last?.0 {
                for try await head in try await client.query(
                    """
                    SELECT head FROM folio_head
                    WHERE library = \(library) AND position > \(position) AND position <= \(last)
                    """, logger: logger
                ).decode(Data.self) {
                    heads.append(head)
                }
            }
            return (changes, heads)
        }
        do {
            let changes = try rows.changes.map { row in
                guard row.1.count == 16 else { throw ServerError(.storage, "a document id of \(row.1.count) bytes") }
                return try EncodedChange(decoding: Array(row.2), document: DocumentID(UUIDBytes(bytes: row.1)))
            }
            let heads = try rows.heads.map { try SignedHead(decoding: Array($0)) }
            let bytesRead = rows.changes.reduce(0) { $0 + $1.2.count }
            let more = rows.changes.count == Self.catchUpBatch || bytesRead >= Self.catchUpBytes
            return (changes, heads, rows.changes.last?.0, more)
        } catch {
            throw ServerError(.storage, "a change of library \(library) in PostgreSQL does not decode", cause: error)
        }
    }

    private func deviceNames() throws -> [Device] {
        let library = self.library
        let logger = database.logger
        let rows: [(Data, String, String)] = try database.run("reading the device names of library \(library)") {
            client in
            var rows: [(Data, String, String)] = []
            for try await row in try await client.query(
                "SELECT device, name, person FROM folio_device_name WHERE library = \(library) ORDER BY device",
                logger: logger
            ).decode((Data, String, String).self) {
                rows.append(row)
            }
            return rows
        }
        return rows.compactMap { row in
            guard row.0.count == 16, !row.1.isEmpty || !row.2.isEmpty else { return nil }
            return Device(id: DeviceID(UUIDBytes(bytes: row.0)), name: row.1, person: row.2)
        }
    }

    private static func removeCopy(at url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}
