import FolioCore
import Foundation
import GRDB

/// The local row numbers of devices and documents, which never change once committed.
///
/// A store with shared access learns them as it goes, asking the file about each one it does not know. A store with
/// exclusive access reads every row when it opens and follows its own inserts, so that the cache is complete: a
/// device or document it does not know has no row, and finding that out costs no query.
struct RowIDCache {
    var devices: [DeviceID: Int64] = [:]
    var devicesByRow: [Int64: DeviceID] = [:]
    var documents: [DocumentID: Int64] = [:]
    /// Whether every row of the device and document tables is here.
    private(set) var isComplete = false

    init() {}

    /// The complete cache of a store with exclusive access: every row `db` holds (none for a new store).
    init(completeFrom db: Database?) throws {
        isComplete = true
        guard let db else { return }
        for row in try Row.fetchAll(db, sql: "SELECT id, uuid FROM device") {
            let device = DeviceID(try ColumnDecoder.uuid(row[1]))
            devices[device] = row[0]
            devicesByRow[row[0]] = device
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, uuid FROM document") {
            documents[DocumentID(try ColumnDecoder.uuid(row[1]))] = row[0]
        }
    }
}

extension ChangeLogStore {
    /// The local row number of `device`, or `nil` when the store has none.
    func rowID(of device: DeviceID, in db: Database) throws -> Int64? {
        try storedRowID(of: device, in: db).row
    }

    /// The local row number of `device`, inserting the device when the store has none.
    func insertingRowID(of device: DeviceID, in db: Database) throws -> Int64 {
        let (found, isComplete) = try storedRowID(of: device, in: db)
        if let found { return found }
        try db.cachedStatement(sql: "INSERT INTO device (uuid) VALUES (?)").execute(arguments: [device.uuid.data])
        exclusiveCache?.stage(Device(id: device, name: ""), in: db)
        let id = db.lastInsertedRowID
        remember(
            inserting: {
                $0.devices[device] = id
                $0.devicesByRow[id] = device
            },
            forgetting: {
                $0.devices[device] = nil
                $0.devicesByRow[id] = nil
            }, complete: isComplete, in: db)
        return id
    }

    /// The row of `device` from the cache or the file, and whether the cache holds every row.
    private func storedRowID(of device: DeviceID, in db: Database) throws -> (row: Int64?, isComplete: Bool) {
        let (cached, isComplete) = rowIDs.withLock { ($0.devices[device], $0.isComplete) }
        if let cached { return (cached, isComplete) }
        guard !isComplete,
            let found = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM device WHERE uuid = ?"), arguments: [device.uuid.data])
        else { return (nil, isComplete) }
        rowIDs.withLock { $0.devices[device] = found }
        return (found, isComplete)
    }

    /// The device whose local row number is `row`.
    func device(forRow row: Int64, in db: Database) throws -> DeviceID {
        let (cached, isComplete) = rowIDs.withLock { ($0.devicesByRow[row], $0.isComplete) }
        if let cached { return cached }
        guard !isComplete,
            let uuid = try Data.fetchOne(
                db.cachedStatement(sql: "SELECT uuid FROM device WHERE id = ?"), arguments: [row]),
            uuid.count == 16
        else {
            throw StoreError(.corrupt, "a change names device row \(row), which is not in the device table")
        }
        let device = DeviceID(UUIDBytes(uuid))
        rowIDs.withLock { $0.devicesByRow[row] = device }
        return device
    }

    /// The local row number of `document`, or `nil` when the store has none.
    func rowID(of document: DocumentID, in db: Database) throws -> Int64? {
        try storedRowID(of: document, in: db).row
    }

    /// The local row number of `document`, inserting the document when the store has none.
    func insertingRowID(of document: DocumentID, in db: Database) throws -> Int64 {
        let (found, isComplete) = try storedRowID(of: document, in: db)
        if let found { return found }
        try db.cachedStatement(sql: "INSERT INTO document (uuid) VALUES (?)").execute(arguments: [document.uuid.data])
        let id = db.lastInsertedRowID
        remember(
            inserting: { $0.documents[document] = id }, forgetting: { $0.documents[document] = nil },
            complete: isComplete, in: db)
        return id
    }

    /// The row of `document` from the cache or the file, and whether the cache holds every row.
    private func storedRowID(of document: DocumentID, in db: Database) throws -> (row: Int64?, isComplete: Bool) {
        let (cached, isComplete) = rowIDs.withLock { ($0.documents[document], $0.isComplete) }
        if let cached { return (cached, isComplete) }
        guard !isComplete,
            let found = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM document WHERE uuid = ?"), arguments: [document.uuid.data])
        else { return (nil, isComplete) }
        rowIDs.withLock { $0.documents[document] = found }
        return (found, isComplete)
    }

    /// Caches a row just inserted in `db`'s open transaction. A complete cache takes it at once, since later
    /// lookups in the transaction no longer ask the file, and forgets it if the transaction rolls back; otherwise
    /// it is cached when the transaction commits.
    private func remember(
        inserting insert: @escaping @Sendable (inout RowIDCache) -> Void,
        forgetting forget: @escaping @Sendable (inout RowIDCache) -> Void, complete: Bool, in db: Database
    ) {
        if complete {
            rowIDs.withLock { insert(&$0) }
            db.afterNextTransaction(onCommit: { _ in }, onRollback: { _ in self.rowIDs.withLock { forget(&$0) } })
        } else {
            db.afterNextTransaction { _ in self.rowIDs.withLock { insert(&$0) } }
        }
    }
}
