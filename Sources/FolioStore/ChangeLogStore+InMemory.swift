import CSQLiteConfig
import FolioCore
import Foundation
import GRDB

/// Stores held in memory: no file, nothing written to disk, gone when released.
extension ChangeLogStore {
    /// Creates an empty store held in memory, with exclusive access. It behaves as a store on disk in every other
    /// way: the same schema, checks and transactions. For peers that need no file of their own, such as the
    /// simulator's cloud, and for scratch work.
    ///
    /// - Parameters:
    ///   - name: names the store in errors and in ``url`` (`memory:NAME`).
    ///   - key: the local device's signing key (see `DeviceKey`).
    ///   - deviceName: the local device's display name; registered in the store.
    ///   - person: the person the local device acts for (`Device.person`), empty when unknown.
    ///   - clock: the wall clock stamped on local changes.
    /// - Throws: ``StoreError``.
    public convenience init(
        inMemoryNamed name: String, key: DeviceKey, deviceName: String = "", person: String = "",
        clock: any WallClock = SystemClock()
    ) throws {
        guard let image = StoreSchema.pristineImage else {
            throw StoreError(
                .database, "the pristine store image could not be built, so no store can be made in memory")
        }
        try self.init(
            url: Self.memoryURL(name), location: "the in-memory store \(name)", memoryImage: image, isNew: true,
            isPristine: true, key: key, deviceName: deviceName, person: person, clock: clock, durability: .off,
            access: .exclusive)
    }

    /// A new store held in memory with a copy of this store's log and bookkeeping as they are now (what has been
    /// committed), for the same device and clock. Copying the database's pages costs far less than syncing a new
    /// store with this one.
    ///
    /// - Parameter name: names the copy in errors and in its ``url``.
    /// - Throws: ``StoreError``.
    public func copyInMemory(named name: String) throws(StoreError) -> ChangeLogStore {
        let image: Data
        // What an exclusive store remembers holds for the copy: taken with it, outside any transaction.
        var inherited: (ExclusiveStoreCache, RowIDCache)?
        do {
            image = try database.writeWithoutTransaction { db in
                try checkAlive()
                var size: Int64 = 0
                guard let bytes = sqlite3_serialize(db.sqliteConnection, "main", &size, 0) else {
                    throw StoreError(.database, "SQLite could not copy \(url.path) into memory")
                }
                defer { sqlite3_free(bytes) }
                inherited = exclusiveCache.map { (ExclusiveStoreCache(copying: $0), rowIDs.withLock { $0 }) }
                return Data(bytes: bytes, count: Int(size))
            }
        } catch {
            throw StoreError.translating(error, while: "copying \(url.path) into memory")
        }
        return try ChangeLogStore(
            url: Self.memoryURL(name), location: "the in-memory store \(name)", memoryImage: image, isNew: false,
            isPristine: false, key: key, deviceName: localDevice.name, person: localDevice.person, clock: clock,
            durability: .off,
            access: .exclusive, limits: limits,
            inherited: inherited)
    }

    /// Whether the store is held in memory.
    public var isInMemory: Bool { url.scheme == "memory" }

    private static func memoryURL(_ name: String) -> URL {
        var components = URLComponents()
        components.scheme = "memory"
        components.path = name
        return components.url ?? URL(string: "memory:store")!
    }

    /// Makes the database image `image` the main database of `db`, a new in-memory connection. The image is marked
    /// as a rollback-journal database first (header bytes 18 and 19): SQLite keeps no write-ahead log in memory.
    static func load(_ image: Data, into db: Database, location: String) throws {
        var image = image
        guard image.count >= 100 else { throw StoreError(.corrupt, "\(location): the database image is too short") }
        image[image.startIndex + 18] = 1
        image[image.startIndex + 19] = 1
        let size = image.count
        guard let buffer = sqlite3_malloc64(UInt64(size))?.assumingMemoryBound(to: UInt8.self) else {
            throw StoreError(.database, "\(location): no memory for a database of \(size) bytes")
        }
        image.copyBytes(to: buffer, count: size)
        // SQLite owns the buffer from here on, even when the call fails.
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        let code = sqlite3_deserialize(db.sqliteConnection, "main", buffer, Int64(size), Int64(size), flags)
        guard code == SQLITE_OK else {
            throw StoreError(.database, "\(location): SQLite could not load the database image (code \(code))")
        }
    }
}
