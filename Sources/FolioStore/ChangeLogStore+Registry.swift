import FolioCore
import Foundation
import GRDB

extension ChangeLogStore {
    /// Records a device's display name (the device is added when new).
    ///
    /// - Throws: ``StoreError``.
    public func registerDevice(_ device: Device) throws {
        try recordDevices([device])
    }

    /// Records the display names of `devices` (each added when new), in one transaction.
    ///
    /// Names come from peers, so each is kept as ``storableName(_:)`` makes it: NUL characters (which SQLite's text
    /// would cut the name at) become U+FFFD, and a name is at most 1,024 bytes of UTF-8.
    ///
    /// - Throws: ``StoreError``.
    public func registerDevices(_ devices: [Device]) throws {
        try recordDevices(devices)
    }

    /// The typed core of ``registerDevices(_:)``, for the store's own code.
    func recordDevices(_ devices: [Device]) throws(StoreError) {
        let devices = devices.map { Device(id: $0.id, name: Self.storableName($0.name)) }
        let changed = devices.filter { device in exclusiveCache.map { $0.name(of: device.id) != device.name } ?? true }
        guard !changed.isEmpty else { return }
        try write("registering \(changed.count == 1 ? "device \(changed[0].id)" : "\(changed.count) devices")") { db in
            for device in changed {
                _ = try insertingRowID(of: device.id, in: db)
                try db.cachedStatement(sql: "UPDATE device SET name = ? WHERE uuid = ?")
                    .execute(arguments: [device.name, device.id.uuid.data])
                exclusiveCache?.stage(device.id, name: device.name, in: db)
            }
        }
    }

    /// A device name as the store keeps it: NUL characters replaced by U+FFFD, cut to at most 1,024 bytes of UTF-8
    /// on a character boundary.
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

    /// The devices known to this store, in identity order; a device seen only through its changes has an empty name.
    ///
    /// - Throws: ``StoreError``.
    public func devices() throws -> [Device] {
        if let exclusiveCache { return exclusiveCache.devices() }
        return try read("listing devices") { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT uuid, name FROM device")).map { row in
                Device(id: DeviceID(try ColumnDecoder.uuid(row[0])), name: row[1] as String? ?? "")
            }
            .sorted { $0.id < $1.id }
        }
    }

    /// What the peer of `key` is known to have of `document`: where the next sync with it starts. Empty when never
    /// synced.
    ///
    /// - Throws: ``StoreError``.
    public func syncCursor(_ key: SyncCursorKey, document: DocumentID) throws -> VersionVector {
        try read("reading the sync cursor of \(key)") { db in
            guard let documentRow = try rowID(of: document, in: db),
                let bytes = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT vector FROM sync_cursor WHERE peer = ? AND document = ?"),
                    arguments: [key.peer, documentRow])
            else { return VersionVector() }
            return try VersionVector(decoding: bytes)
        }
    }

    /// Records what the peer of `key` is known to have of `document`.
    ///
    /// - Throws: ``StoreError``.
    public func setSyncCursor(_ vector: VersionVector, _ key: SyncCursorKey, document: DocumentID) throws {
        try write("saving the sync cursor of \(key)") { db in
            let documentRow = try insertingRowID(of: document, in: db)
            try db.cachedStatement(
                sql: """
                    INSERT INTO sync_cursor (peer, document, vector) VALUES (?, ?, ?)
                    ON CONFLICT (peer, document) DO UPDATE SET vector = excluded.vector
                    """
            )
            .execute(arguments: [key.peer, documentRow, Data(vector.encoded())])
        }
    }
}
