import FolioCore
import Foundation
import GRDB

/// This device's own values per document, by key (where its file was written, its undo stack…): bookkeeping that
/// is not part of the log and is never synced, kept in the file of a ``ChangeLogStore`` beside the log (see
/// ``ChangeLogStore/localState``).
///
/// Every call is one transaction of the store. Values that must stay in step with the changes they name are
/// written with the changes instead, in their transaction (the `localState` of
/// ``ChangeLogStore/append(_:to:on:author:blobs:blobBytes:localState:unpublished:)``).
public struct LocalStateStore: Sendable {
    let store: ChangeLogStore

    /// This device's value for `key` of `document`, if set.
    ///
    /// - Throws: ``StoreError``.
    public func value(_ key: LocalStateKey, of document: DocumentID) throws(StoreError) -> Data? {
        try store.read("reading local state \(key)") { db in
            guard let documentRow = try store.rowID(of: document, in: db) else { return nil }
            var rows = try RawRows(
                db.cachedStatement(sql: "SELECT value FROM local_state WHERE document = ? AND key = ?"),
                arguments: [documentRow, key.name])
            return try rows.next().map { row throws(StoreError) in try StorageCompression.unpackValue(row[0]) }
        }
    }

    /// This device's value for `key` of every document that has one, in document order.
    ///
    /// - Complexity: one pass over the local state of every document.
    /// - Throws: ``StoreError``.
    public func values(_ key: LocalStateKey) throws(StoreError) -> [(document: DocumentID, value: Data)] {
        try store.read("reading local state \(key) of every document") { db in
            var rows = try RawRows(
                db.cachedStatement(
                    sql: """
                        SELECT d.uuid, s.value FROM local_state s JOIN document d ON d.id = s.document
                        WHERE s.key = ? ORDER BY d.uuid
                        """),
                arguments: [key.name])
            var result: [(document: DocumentID, value: Data)] = []
            while let row = try rows.next() {
                result.append((DocumentID(try ColumnDecoder.uuid(row[0])), try StorageCompression.unpackValue(row[1])))
            }
            return result
        }
    }

    /// Sets (or, with `nil`, removes) this device's values for `document`, in one transaction.
    ///
    /// - Throws: ``StoreError``.
    public func set(_ values: [LocalStateKey: Data?], of document: DocumentID) throws(StoreError) {
        try store.write("saving local state of document \(document)") { db in
            let documentRow = try store.insertingRowID(of: document, in: db)
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                if let value {
                    try Self.write([key: value], documentRow: documentRow, in: db)
                } else {
                    try db.cachedStatement(sql: "DELETE FROM local_state WHERE document = ? AND key = ?")
                        .execute(arguments: [documentRow, key.name])
                }
            }
        }
    }

    /// Writes `values` for the document of `documentRow`, inside the open write transaction of `db`.
    static func write(_ values: [LocalStateKey: Data], documentRow: Int64, in db: Database) throws {
        guard !values.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO local_state (document, key, value) VALUES (?, ?, ?)
                ON CONFLICT (document, key) DO UPDATE SET value = excluded.value
                """)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try statement.execute(arguments: [documentRow, key.name, StorageCompression.packValue(value)])
        }
    }
}
