import FolioCore
import FolioStore
import FolioTestWorkPool
import FolioTesting
import Foundation
import Testing

/// Files that are not Folio stores are refused with `notAStore` and left exactly as they were, whichever the access
/// (with exclusive access, the file is checked on the store's own connection before anything could write to it).
@Suite(.workPool) struct BadFileTests {
    let directory: TemporaryDirectory
    let device = Device.named("A")

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// Opens `url`, which must fail; returns the error.
    private func openingFails(_ url: URL, access: StoreAccess = .shared) throws -> StoreError {
        let error = #expect(throws: StoreError.self) {
            _ = try ChangeLogStore(at: url, device: self.device, clock: Fixtures.clock(), access: access)
        }
        return try #require(error)
    }

    @Test func randomBytesAreNotAStoreAndAreLeftUntouched() throws {
        let seed = TestSeed.make()
        var generator = SplitMix64(seed: seed)
        let url = directory.file("random.bin")
        let bytes = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: url)

        let error = try openingFails(url)
        #expect(error.code == .notAStore, "seed \(seed): \(error)")
        #expect(error.message.contains(url.path))
        #expect(try Data(contentsOf: url) == bytes, "seed \(seed)")
        #expect(try directory.fileNames() == ["random.bin"], "no -wal or -shm file was created")
    }

    @Test func aTextFileIsNotAStore() throws {
        let url = directory.file("notes.txt")
        let bytes = Data("SQLite format 2, or so it says\n".utf8)
        try bytes.write(to: url)
        #expect(try openingFails(url).code == .notAStore)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anotherSQLiteDatabaseIsNotAStoreAndIsLeftUntouched(access: StoreAccess) throws {
        let url = directory.file("other.sqlite")
        let made = try SQLiteShell.run(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me');",
            on: url)
        try #require(made.succeeded, "cannot make a SQLite file: \(made.errors)")
        let bytes = try Data(contentsOf: url)
        #expect(bytes.starts(with: Data("SQLite format 3\0".utf8)))

        let error = try openingFails(url, access: access)
        #expect(error.code == .notAStore, "\(error)")
        #expect(error.message.contains("notes"), "names what the file holds: \(error.message)")
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try directory.fileNames() == ["other.sqlite"])
        let read = try SQLiteShell.run("SELECT text FROM notes;", on: url)
        #expect(read.output.contains("keep me"))
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aDatabaseWithAForeignFolioMetaTableIsNotAStore(access: StoreAccess) throws {
        let url = directory.file("impostor.sqlite")
        let made = try SQLiteShell.run(
            "CREATE TABLE folio_meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO folio_meta VALUES ('format', 'something else');",
            on: url)
        try #require(made.succeeded, "\(made.errors)")
        let bytes = try Data(contentsOf: url)
        #expect(try openingFails(url, access: access).code == .notAStore)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func anEmptyFileBecomesANewStore() throws {
        let url = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        var store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock())
        try store.checkInvariants()
        let change = try store.append(Fixtures.edit("first"), to: Fixtures.document)
        try store.checkInvariants()
        try store.close()

        store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock())
        #expect(try store.changes(of: Fixtures.document) == [change])
        try store.checkInvariants()
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anEmptySQLiteDatabaseBecomesANewStore(access: StoreAccess) throws {
        let url = directory.file("blank.sqlite")
        let made = try SQLiteShell.run("PRAGMA user_version = 7; VACUUM;", on: url)
        try #require(made.succeeded, "\(made.errors)")
        let store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: access)
        try store.append(Fixtures.edit("first"), to: Fixtures.document)
        try store.checkInvariants()
        #expect(try store.vector(of: Fixtures.document) == VersionVector.of([(device.id, 1)]))
    }

    /// What a process killed while creating a store leaves: GRDB's bookkeeping table, before the first migration.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aCreationInterruptedBeforeTheFirstMigrationBecomesANewStore(access: StoreAccess) throws {
        let url = directory.file("interrupted.sqlite")
        let made = try SQLiteShell.run("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);", on: url)
        try #require(made.succeeded, "\(made.errors)")
        let store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: access)
        try store.checkInvariants()
        try store.append(Fixtures.edit("first"), to: Fixtures.document)
        try store.checkInvariants()
        #expect(try store.changeCount() == 1)
    }

    /// What a process killed while creating a store can leave (`folio log append` killed at random left it): the
    /// first transaction runs before WAL mode is on, so a hot rollback journal remains, which a read-only connection
    /// cannot roll back. Here: an empty SQLite file, then a transaction that spilled to the file and never committed.
    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aHotJournalLeftByACrashIsRolledBackAndTheStoreOpens(access: StoreAccess) throws {
        let url = directory.file("hot.sqlite")
        let died = try SQLiteShell.python(
            """
            import os, sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("PRAGMA user_version = 1")
            connection.execute("PRAGMA cache_size = 1")
            connection.execute("BEGIN")
            connection.execute("CREATE TABLE half_made (x)")
            for _ in range(500): connection.execute("INSERT INTO half_made VALUES (randomblob(1000))")
            os._exit(0)
            """, arguments: [url.path])
        try #require(died.succeeded, "\(died.errors)")
        try #require(FileManager.default.fileExists(atPath: url.path + "-journal"), "a hot journal is left")
        #expect(try Data(contentsOf: url).starts(with: Data("SQLite format 3\0".utf8)))

        let store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: access)
        try store.checkInvariants()
        let change = try store.append(Fixtures.edit("first"), to: Fixtures.document)
        try store.checkInvariants()
        #expect(try store.changes(of: Fixtures.document) == [change])
        try store.close()
        let tables = try SQLiteShell.run("SELECT name FROM sqlite_master WHERE name = 'half_made';", on: url)
        #expect(tables.succeeded && tables.output.isEmpty, "the interrupted transaction was rolled back")
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func anotherAppsMigratedDatabaseIsNotAStore(access: StoreAccess) throws {
        let url = directory.file("other-app.sqlite")
        let made = try SQLiteShell.run(
            "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY); INSERT INTO grdb_migrations VALUES ('v1 contacts');",
            on: url)
        try #require(made.succeeded, "\(made.errors)")
        let bytes = try Data(contentsOf: url)
        #expect(try openingFails(url, access: access).code == .notAStore)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test(arguments: [StoreAccess.shared, .exclusive])
    func aStoreFromANewerFolioIsRefused(access: StoreAccess) throws {
        let url = directory.file("newer.sqlite")
        var store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: access)
        try store.append(Fixtures.edit("first"), to: Fixtures.document)
        try store.checkInvariants()
        try store.close()
        let migrated = try SQLiteShell.run(
            "INSERT INTO grdb_migrations (identifier) VALUES ('v99 from the future');", on: url)
        try #require(migrated.succeeded, "\(migrated.errors)")

        let error = try openingFails(url, access: access)
        #expect(error.code == .newerFormat, "\(error)")
        #expect(error.message.contains("v99 from the future"))

        // Once the unknown step is gone, the store opens again with its contents.
        try #require(
            try SQLiteShell.run("DELETE FROM grdb_migrations WHERE identifier LIKE 'v99%';", on: url).succeeded)
        store = try ChangeLogStore(at: url, device: device, clock: Fixtures.clock(), access: access)
        #expect(try store.changeCount() == 1)
        try store.checkInvariants()
    }

    @Test func aMissingDirectoryIsADatabaseError() throws {
        let url = directory.file("no such directory/store.sqlite")
        let error = try openingFails(url)
        #expect(error.code == .database, "\(error)")
        #expect(error.cause != nil)
    }
}
