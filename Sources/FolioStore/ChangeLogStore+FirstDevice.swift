import FolioCore
import FolioFiles
import Foundation
import GRDB

extension ChangeLogStore {
    /// The device that created the store at `url`: opening a store registers its local device before anything
    /// else can add one, so the first row of the device table is the device the store was made for. Tools that
    /// read someone's store (`folio inspect`) open it as that device instead of registering a new one.
    ///
    /// The file is only read (through a read-only connection), after the same checks
    /// ``init(at:key:deviceName:clock:durability:access:limits:fileSystem:)`` makes.
    ///
    /// - Returns: the device, or `nil` when the file is absent or empty (no store yet).
    /// - Throws: ``StoreError`` `notAStore` (not SQLite, or SQLite holding something else), `corrupt`, `database`.
    public static func firstDevice(ofStoreAt url: URL) throws -> Device? {
        try Self.recordedFirstDevice(ofStoreAt: url)
    }

    /// The typed core of ``firstDevice(ofStoreAt:)``, for the module's own code.
    static func recordedFirstDevice(ofStoreAt url: URL) throws(StoreError) -> Device? {
        let path = url.path
        guard try holdsDatabase(url, on: PosixFileSystem()) else { return nil }
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
}
