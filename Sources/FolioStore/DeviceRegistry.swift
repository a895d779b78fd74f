import FolioCore
import FolioFiles
import Foundation
import GRDB

/// The devices a ``ChangeLogStore`` knows (see ``ChangeLogStore/devices``): their identities, met in changes or
/// registered, and their display names, in the store's file. Every call is one transaction of the store.
public struct DeviceRegistry: Sendable {
    let store: ChangeLogStore

    /// Records a device's display name and person (the device is added when new).
    ///
    /// - Throws: ``StoreError``.
    public func register(_ device: Device) throws(StoreError) {
        try register([device])
    }

    /// Records the display names and persons of `devices` (each added when new), in one transaction.
    ///
    /// Names and persons come from peers, so each is kept as ``storableName(_:)`` makes it: NUL characters (which
    /// SQLite's text would cut it at) become U+FFFD, and it is at most 1,024 bytes of UTF-8.
    ///
    /// - Throws: ``StoreError``.
    public func register(_ devices: [Device]) throws(StoreError) {
        let devices = devices.map {
            Device(id: $0.id, name: Self.storableName($0.name), person: Self.storableName($0.person))
        }
        let exclusiveCache = store.exclusiveCache
        let changed = devices.filter { device in exclusiveCache.map { $0.device(device.id) != device } ?? true }
        guard !changed.isEmpty else { return }
        try store.write("registering \(changed.count == 1 ? "device \(changed[0].id)" : "\(changed.count) devices")") {
            db in
            for device in changed {
                _ = try store.insertingRowID(of: device.id, in: db)
                try db.cachedStatement(sql: "UPDATE device SET name = ?, person = ? WHERE uuid = ?")
                    .execute(arguments: [device.name, device.person, device.id.uuid.data])
                exclusiveCache?.stage(device, in: db)
            }
        }
    }

    /// A device name or person as the store keeps it: NUL characters replaced by U+FFFD, cut to at most 1,024 bytes
    /// of UTF-8 on a character boundary.
    public static func storableName(_ name: String) -> String {
        var kept = ""
        var bytes = 0
        for character in name {
            let text =
                character.unicodeScalars.contains("\0")
                ? String(String.UnicodeScalarView(character.unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
                : String(character)
            bytes += text.utf8.count
            if bytes > 1_024 { break }
            kept += text
        }
        return kept
    }

    /// The devices known to this store, in identity order; a device seen only through its changes has an empty name
    /// and person.
    ///
    /// - Throws: ``StoreError``.
    public func all() throws(StoreError) -> [Device] {
        if let exclusiveCache = store.exclusiveCache { return exclusiveCache.devices() }
        return try store.read("listing devices") { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT uuid, name, person FROM device")).map { row in
                Device(
                    id: DeviceID(try ColumnDecoder.uuid(row[0])), name: row[1] as String? ?? "",
                    person: row[2] as String? ?? "")
            }
            .sorted { $0.id < $1.id }
        }
    }

    /// Registers the local device with its name, and keeps its key in the store (once).
    func registerLocalDevice() throws(StoreError) {
        try register([store.localDevice])
        let deviceID = store.localDevice.id
        let kept = try store.read("reading the local device's key") { db -> Bool in
            guard let row = try store.rowID(of: deviceID, in: db) else { return false }
            return try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM device_key WHERE device = ?"), arguments: [row]) ?? false
        }
        guard !kept else { return }
        try store.write("keeping the local device's key") { db in
            let row = try store.insertingRowID(of: deviceID, in: db)
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO device_key (device, secret) VALUES (?, ?)")
                .execute(arguments: [row, store.key.rawRepresentation])
        }
    }
}

/// The devices of a store's file read without opening the store, for tools that read someone's store.
extension DeviceRegistry {
    /// The device that created the store at `url`: opening a store registers its local device before anything
    /// else can add one, so the first row of the device table is the device the store was made for. Tools that
    /// read someone's store (`folio inspect`) open it as that device instead of registering a new one.
    ///
    /// The file is only read (through a read-only connection), after the same checks
    /// ``ChangeLogStore/init(at:key:deviceName:person:clock:durability:access:limits:fileSystem:)`` makes.
    ///
    /// - Returns: the device, or `nil` when the file is absent or empty (no store yet).
    /// - Throws: ``StoreError`` `notAStore` (not SQLite, or SQLite holding something else), `corrupt`, `database`.
    public static func firstDevice(ofStoreAt url: URL) throws(StoreError) -> Device? {
        let path = url.path
        guard try ChangeLogStore.holdsDatabase(url, on: PosixFileSystem()) else { return nil }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db -> Device? in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                guard tables.contains("folio_meta"), tables.contains("device"),
                    try String.fetchOne(db, sql: "SELECT value FROM folio_meta WHERE key = 'format'")
                        == StoreSchema.formatMarker
                else {
                    throw StoreError(.notAStore, "\(path) is a SQLite database of something else, not a Folio store")
                }
                guard let row = try Row.fetchOne(db, sql: "SELECT uuid, name FROM device ORDER BY id LIMIT 1") else {
                    return nil
                }
                return Device(id: DeviceID(try ColumnDecoder.uuid(row[0])), name: row[1] as String? ?? "")
            }
        } catch {
            throw StoreError.translating(error, while: "reading the devices of \(path)")
        }
    }

    /// The key, name and person of the first device the store at `url` was opened as with a key: the device a library
    /// is when the app passes none, and the one tools that read someone's store (`folio inspect`) open it as, rather
    /// than as a new one.
    ///
    /// The file is only read (through a read-only connection), after the checks ``firstDevice(ofStoreAt:)`` makes.
    ///
    /// - Returns: the key, the device's name and its person (empty in a store written before devices had persons),
    ///   or `nil` when the file is absent or empty, or keeps no key (a store written before devices had keys, not
    ///   opened since).
    /// - Throws: ``StoreError`` `notAStore`, `corrupt`, `database`.
    public static func localIdentity(ofStoreAt url: URL) throws(StoreError) -> (
        key: DeviceKey, name: String, person: String
    )? {
        guard try firstDevice(ofStoreAt: url) != nil else { return nil }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db -> (key: DeviceKey, name: String, person: String)? in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                // The file is read as it is, not migrated: a store of an earlier format has no person column.
                let hasPerson = try db.columns(in: "device").contains { $0.name == "person" }
                guard tables.contains("device_key"),
                    let row = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT d.uuid, d.name, k.secret, \(hasPerson ? "d.person" : "''")
                            FROM device_key k JOIN device d ON d.id = k.device ORDER BY k.id LIMIT 1
                            """),
                    let secret = row[2] as Data?, let key = try? DeviceKey(rawRepresentation: secret),
                    key.id == DeviceID(try ColumnDecoder.uuid(row[0]))
                else { return nil }
                return (key, row[1] as String? ?? "", row[3] as String? ?? "")
            }
        } catch {
            throw StoreError.translating(error, while: "reading the local device's key in \(url.path)")
        }
    }
}
