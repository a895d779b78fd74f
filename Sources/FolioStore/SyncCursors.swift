import FolioCore
import Foundation
import GRDB

/// Where the next sync with each peer starts, per document, in the file of a ``ChangeLogStore`` (see
/// ``ChangeLogStore/syncCursors``): what the peer of a ``SyncCursorKey`` is known to have. Every call is one
/// transaction of the store.
public struct SyncCursors: Sendable {
    let store: ChangeLogStore

    /// What the peer of `key` is known to have of `document`: where the next sync with it starts. Empty when never
    /// synced.
    ///
    /// - Throws: ``StoreError``.
    public func vector(_ key: SyncCursorKey, of document: DocumentID) throws(StoreError) -> VersionVector {
        try store.read("reading the sync cursor of \(key)") { db in
            guard let documentRow = try store.rowID(of: document, in: db),
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
    public func set(_ vector: VersionVector, _ key: SyncCursorKey, of document: DocumentID) throws(StoreError) {
        try store.write("saving the sync cursor of \(key)") { db in
            let documentRow = try store.insertingRowID(of: document, in: db)
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
