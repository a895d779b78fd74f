import CSQLiteConfig
import FolioCore
import FolioFiles
import Foundation
import GRDB
import Synchronization

/// The change logs of many documents, kept in one SQLite file (WAL mode, a pool of readers and one writer), or in
/// memory (see ``init(inMemoryNamed:key:deviceName:person:clock:)``).
///
/// Every operation is one transaction: a call that returns has committed, so a process crash after it loses
/// nothing (see ``Durability`` for power loss). Local edits are appended (``append(_:to:on:)``; the store assigns
/// sequence numbers, parents, vectors and lamport timestamps); changes from peers are ingested in any order
/// (``ingest(encoded:heads:)``).
/// The change table is append-only, enforced by SQLite triggers.
///
/// The store is `Sendable`: it holds no connection itself, only a GRDB database (a `DatabasePool`, or a
/// `DatabaseQueue` with ``StoreAccess/exclusive``) that hands a connection to one closure at a time, and synchronous
/// SQLite work never runs inside an actor's critical path for longer than a transaction.
public final class ChangeLogStore: Sendable {
    /// The SQLite file; for a store in memory, a `memory:` URL with its name.
    public let url: URL
    /// The device this store appends changes as: the identity of ``key``, with its display name.
    public let localDevice: Device
    /// The local device's signing key: it signs the heads that vouch for the local device's changes (see
    /// ``signedHeads(of:since:signingOwn:)``), and the store keeps it in its file (see
    /// ``DeviceRegistry/localIdentity(ofStoreAt:)``).
    public let key: DeviceKey
    /// The key of the local device's second identity, for changes it records on behalf of other programs
    /// (``DeviceKey/externalKey``, derived from ``key``): as for the local device, the store signs its heads and
    /// takes none of its changes from peers.
    let externalKey: DeviceKey
    /// Heads of the local identities signed since the store opened, by document (see ``signedHeads(of:)``).
    let signedTips = Mutex<[DocumentID: [DeviceID: SignedHead]]>([:])
    /// How commits reach the disk.
    public let durability: Durability
    /// Who else may use the file while the store is open.
    public let access: StoreAccess
    /// Bounds on what the store keeps on behalf of peers.
    public let limits: StoreLimits

    /// A `DatabasePool` (shared access) or a `DatabaseQueue` (exclusive access).
    let database: any DatabaseWriter
    /// The queue, with exclusive access.
    let exclusiveQueue: DatabaseQueue?
    /// Set when a simulated crash killed the store (`CrashSimulation.kill(_:)`): its connection is closed, and every
    /// later use of the database fails.
    let isKilled = Atomic(false)
    let clock: any WallClock
    /// Row numbers of devices and documents (see ``RowIDCache``).
    let rowIDs = Mutex(RowIDCache())
    /// Large changes lately read or written, decoded (see ``DecodedValueCache``).
    let decodedChanges = Mutex(DecodedValueCache<ChangeHash, Change>(byteLimit: 8 << 20))
    /// Checkpoint contents lately read, inflated and checked against their hash.
    let decodedContents = Mutex(DecodedValueCache<ContentHash, Data>(byteLimit: 8 << 20))
    /// The decoded compact segments of the documents read most recently.
    let segmentCache = SegmentCache()
    /// When documents are folded into segments.
    let foldPolicy = FoldPolicy.standard
    /// The rows added per document since it was last folded.
    let foldCounters = FoldCounters()
    /// Every document's frontier and every device's name, with exclusive access (see ``ExclusiveStoreCache``).
    let exclusiveCache: ExclusiveStoreCache?
    /// Handlers told of every local append (see ``observeAppends(_:)``).
    let appendObservers = AppendObservers()
    /// No unvouched change waits that arrived before this time (milliseconds since 1970), as far as this store
    /// knows: an ingest before `floor + unvouchedAge` has nothing to expire and asks the pending table nothing.
    /// `nil` until the first expiry and after a transaction that expired rolls back (see
    /// ``expireUnvouched(now:in:)``).
    let unvouchedFloor = Mutex<Int64?>(nil)
    /// Whether the store may hold heads of its own identities' changes in documents whose local copy it removed
    /// (see ``removedOwnHeads(of:in:)``), so that an ingest or an append asks the table nothing while it is empty.
    /// With exclusive access: read when the store opens, set by a removal, cleared when the last record goes. With
    /// shared access (another process may remove a copy) always true.
    let mayHaveRemovedOwnHeads = Atomic(false)

    /// Opens the store at `url`, creating it if the file does not exist or is empty.
    ///
    /// - Parameters:
    ///   - url: the SQLite file; its directory must exist.
    ///   - key: the local device's signing key, whose identity is the local device's (see `DeviceKey`); kept in
    ///     the store's file.
    ///   - deviceName: the local device's display name; registered in the store.
    ///   - person: the person the local device acts for (`Device.person`), empty when unknown; registered in the
    ///     store.
    ///   - clock: the wall clock stamped on local changes.
    ///   - durability: how commits reach the disk.
    ///   - access: whether other connections may use the file at the same time (``StoreAccess/shared``, the
    ///     default) or this store is its only user (``StoreAccess/exclusive``, cheaper transactions).
    ///   - limits: bounds on what the store keeps on behalf of peers.
    ///   - fileSystem: reads the file's header and writes a new store's first image (SQLite does the rest of the
    ///     store's I/O itself).
    /// - Throws: ``StoreError`` with code `notAStore` (the file is something else; it is left untouched),
    ///   `newerFormat`, `corrupt` or `database` (with `exclusive`, also when another connection holds the file).
    public convenience init(
        at url: URL, key: DeviceKey, deviceName: String = "", person: String = "", clock: any WallClock = SystemClock(),
        durability: Durability = .normal, access: StoreAccess = .shared, limits: StoreLimits = StoreLimits(),
        fileSystem: any FileSystem = PosixFileSystem()
    ) throws {
        let isNew = try Self.preflight(url, on: fileSystem)
        // A new store starts as a copy of the pristine image, which has every migration applied.
        let isPristine = isNew && StoreSchema.pristineImage != nil
        if isPristine, let image = StoreSchema.pristineImage {
            do {
                try durability.writeWhole(image, to: url, on: fileSystem)
            } catch {
                throw StoreError(.database, "cannot create the store \(url.path)", cause: error)
            }
        }
        try self.init(
            url: url, location: url.path, memoryImage: nil, isNew: isNew, isPristine: isPristine, key: key,
            deviceName: deviceName, person: person, clock: clock, durability: durability, access: access,
            limits: limits)
    }

    /// Opens the store: the file at `url`, or the database `memoryImage` in memory (with exclusive access).
    ///
    /// - Parameters:
    ///   - location: the file's path, or the in-memory store's name, for errors.
    ///   - isNew: whether there is no store yet (so no format to check); `isPristine`: whether it is the pristine
    ///     image (every migration applied, no rows).
    ///   - inherited: for a copy of an open exclusive store, taken with the copy: what that store remembered and its
    ///     row numbers, which hold for the copy too (so its format is not checked and nothing is read).
    init(
        url: URL, location: String, memoryImage: Data?, isNew: Bool, isPristine: Bool, key: DeviceKey,
        deviceName: String, person: String = "", clock: any WallClock, durability: Durability, access: StoreAccess,
        limits: StoreLimits = StoreLimits(),
        inherited: (ExclusiveStoreCache, RowIDCache)? = nil
    ) throws(StoreError) {
        self.url = url
        self.key = key
        externalKey = key.externalKey
        // Kept as the store keeps any device's (at most 1 KiB, no NUL), so that every peer reads them back whole.
        self.localDevice = Device(
            id: key.id, name: DeviceRegistry.storableName(deviceName), person: DeviceRegistry.storableName(person))
        self.durability = durability
        self.access = access
        self.limits = limits
        self.clock = clock
        _ = Self.sqliteSettings
        var configuration = Configuration()
        configuration.label = "folio-store"
        configuration.busyMode = .timeout(10)
        let synchronous = durability.synchronousPragma
        // No foreign keys in the schema: GRDB need not turn them on.
        configuration.foreignKeysEnabled = false
        // Whether the check found every migration applied already, so that the migrator has nothing to do.
        let isMigrated = Mutex(isPristine || inherited != nil)
        let checksFormat = !isNew && inherited == nil
        configuration.prepareDatabase { db in
            // An in-memory store's database is loaded first of all, before SQLite reads its schema.
            if let memoryImage { try Self.load(memoryImage, into: db, location: location) }
            // With exclusive access, exclusive locking comes before the first read, so that SQLite keeps the WAL
            // index in the heap (no -shm file) and takes its file lock once, not at every transaction. Then an
            // existing file is checked before anything could write to it (a pool's readers cannot write). The sync
            // level comes before the switch to WAL mode, so that it applies to the switch too.
            if access == .exclusive { try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
            if checksFormat && !db.configuration.readonly {
                let complete = try Self.checkFormat(db, path: location)
                isMigrated.withLock { $0 = complete }
            }
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if access == .exclusive && memoryImage == nil {
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw StoreError(.database, "SQLite could not put \(location) in WAL mode")
                }
            }
            try db.execute(sql: "PRAGMA cache_size = -16384; PRAGMA mmap_size = 268435456")
        }
        do {
            switch access {
            case .shared:
                let pool = try DatabasePool(path: url.path, configuration: configuration)
                // GRDB sets a pool's writer to `synchronous = NORMAL` when it turns WAL mode on, after
                // `prepareDatabase`: without this, `.full` would not sync the log at commits.
                try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
                database = pool
                exclusiveQueue = nil
            case .exclusive:
                // WAL mode is set above, after exclusive locking: GRDB's own WAL set-up is for pools of readers.
                configuration.busyMode = .immediateError
                let queue = try DatabaseQueue(
                    path: memoryImage == nil ? url.path : ":memory:", configuration: configuration)
                database = queue
                exclusiveQueue = queue
            }
            if !isMigrated.withLock({ $0 }) { try StoreSchema.migrator.migrate(database) }
            if let exclusiveQueue, !isPristine {
                let found = try exclusiveQueue.unsafeRead { db in
                    try RemovedOwnHeadTable.holdsAny(in: db)
                }
                mayHaveRemovedOwnHeads.store(found, ordering: .relaxed)
            } else if exclusiveQueue == nil {
                // Another process may remove a document's local copy from a shared store at any time: only an
                // exclusive one can know that the table stays empty.
                mayHaveRemovedOwnHeads.store(true, ordering: .relaxed)
            }
            exclusiveQueue?.writeWithoutTransaction(Self.removeStatementAuthorizer)
            if let inherited {
                exclusiveCache = inherited.0
                rowIDs.withLock { $0 = inherited.1 }
            } else if let exclusiveQueue {
                exclusiveCache =
                    try isPristine
                    ? ExclusiveStoreCache() : exclusiveQueue.unsafeRead(ExclusiveStoreCache.init(reading:))
                let complete =
                    try isPristine
                    ? RowIDCache(completeFrom: nil) : exclusiveQueue.unsafeRead(RowIDCache.init(completeFrom:))
                rowIDs.withLock { $0 = complete }
            } else {
                exclusiveCache = nil
            }
        } catch {
            throw StoreError.translating(error, while: "opening \(location)")
        }
        try devices.registerLocalDevice()
    }

    /// SQLite's process-wide settings, made once before the process's first store opens: memory statistics off,
    /// so that stores used on several threads at once do not queue on SQLite's allocation mutex. A process that
    /// used SQLite before its first store keeps its settings. Applied by the store's designated initializer and by
    /// the pristine image, which may be built before it (a store's first use of SQLite in the process).
    static let sqliteSettings: Void = {
        _ = folio_sqlite_disable_memory_statistics()
    }()

    /// Removes GRDB's statement authorizer from an exclusive store's connection, once migrated.
    ///
    /// SQLite calls the authorizer for every table and column a statement names while preparing it; GRDB uses it
    /// to learn what each statement reads and writes, for its database observation, its schema cache and its
    /// bookkeeping of savepoints and deferred transactions. An exclusive store uses none of these after its
    /// migration (no observers, no schema changes, no savepoints; its transactions begin `IMMEDIATE`, which SQLite's
    /// commit and rollback hooks report to GRDB by themselves), and the callbacks were about 30 % of the cost of
    /// preparing its statements. A store with shared access keeps the authorizer: GRDB runs its transactions.
    private static func removeStatementAuthorizer(_ db: Database) {
        db.clearSchemaCache()
        sqlite3_set_authorizer(db.sqliteConnection, nil, nil)
    }

    /// Refuses a file that does not start as a SQLite database (before SQLite could touch it); returns whether the
    /// store is new (no file, or an empty one). An existing database is checked by ``checkFormat(_:path:)`` as soon
    /// as the store's connection opens.
    private static func preflight(_ url: URL, on fileSystem: any FileSystem) throws(StoreError) -> Bool {
        try !holdsDatabase(url, on: fileSystem)
    }

    /// Whether the file at `url` starts as a SQLite database: `false` when it is absent or empty (no store yet);
    /// throws `notAStore` when it holds something else, or is a symbolic link (never followed) or not a regular
    /// file, and `database` when it cannot be read. Reads its first 16 bytes only, through `fileSystem`.
    static func holdsDatabase(_ url: URL, on fileSystem: any FileSystem) throws(StoreError) -> Bool {
        let path = url.path
        let header: Data
        do {
            header = try fileSystem.leadingBytes(of: url, count: 16)
        } catch let error as FileSystemError where error.code == .notFound {
            return false
        } catch let error as FileSystemError where error.code == .symbolicLink || error.code == .notRegularFile {
            throw StoreError(
                .notAStore,
                "\(path) is \(error.code == .symbolicLink ? "a symbolic link" : "not a regular file"), so not a Folio store; it was not modified",
                cause: error)
        } catch {
            throw StoreError(.database, "cannot read \(path) to tell whether it is a Folio store", cause: error)
        }
        if header.isEmpty { return false }
        guard header == Data("SQLite format 3\0".utf8) else {
            throw StoreError(.notAStore, "\(path) is not a SQLite database, so not a Folio store; it was not modified")
        }
        return true
    }

    /// Throws `notAStore` or `newerFormat` when the SQLite database `db` (at `path`) is not a store this build can
    /// open; returns whether every migration of this build is applied. It only reads: a process killed in the
    /// middle of the very first transaction (which creates the store, in rollback-journal mode) left a hot
    /// journal, which this first read rolls back, as any SQLite client would.
    private static func checkFormat(_ db: Database, path: String) throws -> Bool {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        if tables.isEmpty { return false }
        // GRDB creates its bookkeeping table before, and apart from, the first migration: a creation that was
        // interrupted in between leaves that table alone and empty, which is still a new store.
        if tables == ["grdb_migrations"], try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM grdb_migrations") == 0 {
            return false
        }
        let marker =
            tables.contains("folio_meta")
            ? try String.fetchOne(db, sql: "SELECT value FROM folio_meta WHERE key = 'format'") : nil
        guard marker == StoreSchema.formatMarker else {
            throw StoreError(
                .notAStore,
                "\(path) is a SQLite database of something else (tables: \(tables.sorted().prefix(5).joined(separator: ", "))), not a Folio store; it was not modified"
            )
        }
        let known = Set(StoreSchema.migrator.migrations)
        let applied = try StoreSchema.migrator.appliedIdentifiers(db)
        if !applied.isSubset(of: known) {
            let unknown = applied.subtracting(known).sorted()
            throw StoreError(
                .newerFormat,
                "\(path) was written by a newer Folio (schema steps \(unknown.joined(separator: ", ")) are unknown to this build); update Folio to open it"
            )
        }
        return applied == known
    }

    /// Runs `body` in a write transaction, translating every error into a ``StoreError``.
    ///
    /// With ``StoreAccess/exclusive``, the transaction is begun and ended by statements prepared once per connection
    /// (GRDB parses its own at every transaction), which SQLite's commit and rollback hooks report to GRDB as usual.
    func write<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            guard let exclusiveQueue else { return try database.write(body) }
            return try exclusiveQueue.writeWithoutTransaction { db in
                try checkAlive()
                try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
                do {
                    let result = try body(db)
                    try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
                    return result
                } catch {
                    if db.isInsideTransaction { try? db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
                    throw error
                }
            }
        } catch {
            throw StoreError.translating(error, while: action())
        }
    }

    /// Runs `body` on a consistent snapshot, translating every error into a ``StoreError``.
    ///
    /// With ``StoreAccess/shared``, a read transaction on one of the pool's readers. With ``StoreAccess/exclusive``,
    /// the store's one connection, on which nothing else can write while `body` runs (the queue runs one closure at
    /// a time and no other connection can take the file), so no transaction is needed; nor is GRDB's read-only
    /// guard, whose `PRAGMA query_only` toggles would expire every prepared statement at every read.
    func read<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            if let exclusiveQueue {
                return try exclusiveQueue.unsafeRead { db in
                    try checkAlive()
                    return try body(db)
                }
            }
            return try database.read(body)
        } catch {
            throw StoreError.translating(error, while: action())
        }
    }

    /// Fails once a simulated crash killed the store (``isKilled``). Called on the connection's queue, after which
    /// the kill closes the connection, so that nothing reaches a closed connection.
    func checkAlive() throws(StoreError) {
        if isKilled.load(ordering: .acquiring) {
            throw StoreError(.database, "\(url.path) belongs to a process that was killed (a simulated crash)")
        }
    }

    /// Folds the documents' older changes into compact segments (see ``foldAll(minimum:minimumBytes:)``), folds the write-ahead
    /// log into the database file and closes the store's connections, leaving one file. Further calls fail.
    ///
    /// - Throws: ``StoreError``.
    public func close() throws(StoreError) {
        // The history is left compact; a fold that fails leaves its rows as they were, and the store still closes.
        try? foldAll()
        do {
            _ = try database.writeWithoutTransaction { db in
                try checkAlive()
                return try db.checkpoint(.truncate)
            }
            // A pool closes its writer before its readers, and a read-only connection that closes last leaves the
            // write-ahead log and its shared-memory index behind: the readers are closed first, so that the writer,
            // closing last, removes both.
            (database as? DatabasePool)?.releaseMemory()
            try database.close()
        } catch {
            throw StoreError.translating(error, while: "closing \(url.path)")
        }
    }

    /// The size of the store's database in bytes (its page count times its page size, as SQLite reports them; no
    /// file is read), for a quota per store: what the file holds once the write-ahead log is folded into it,
    /// including free pages kept for reuse (a store does not shrink its file); the write-ahead log itself is not
    /// counted. Cheap: two pragmas.
    ///
    /// - Throws: ``StoreError`` with code `database`.
    public func byteSize() throws(StoreError) -> Int {
        try read("reading the size of the store") { db in
            let pages = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA page_count")) ?? 0
            let pageSize = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA page_size")) ?? 0
            return pages * pageSize
        }
    }
}
