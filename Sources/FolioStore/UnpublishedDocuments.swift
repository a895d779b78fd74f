import FolioCore
import Foundation
import GRDB

/// The documents this device keeps to itself, in the file of a ``ChangeLogStore`` (see
/// ``ChangeLogStore/unpublished``). Every call is one transaction of the store.
public struct UnpublishedDocuments: Sendable {
    let store: ChangeLogStore

    /// The documents this device keeps to itself: every sync leaves them out. Their changes are neither announced
    /// nor sent to peers (a peer's request for one is answered with nothing), and the changes of them that peers
    /// announce or push are neither requested nor taken. A document this device has never seen is not among them.
    ///
    /// `DocumentLibrary` keeps here the documents it puts in its local container; a sync reads the set once.
    ///
    /// - Complexity: O(unpublished documents): one query on a table of their own.
    /// - Throws: ``StoreError``.
    public func documents() throws(StoreError) -> Set<DocumentID> {
        try store.read("reading the unpublished documents") { db in
            var rows = try RawRows(
                db.cachedStatement(sql: "SELECT d.uuid FROM unpublished u JOIN document d ON d.id = u.document"),
                arguments: [])
            var documents: Set<DocumentID> = []
            while let row = try rows.next() { documents.insert(DocumentID(try ColumnDecoder.uuid(row[0]))) }
            return documents
        }
    }

    /// Keeps `document` to this device (`true`: see ``documents()``) or publishes it again, with its
    /// whole history (`false`), in one transaction.
    ///
    /// To change it together with a change of the document, pass `unpublished` to
    /// ``ChangeLogStore/append(_:to:on:author:blobs:blobBytes:localState:unpublished:)`` instead: then no sync can see one without the other.
    ///
    /// - Throws: ``StoreError``.
    public func set(_ isUnpublished: Bool, _ document: DocumentID) throws(StoreError) {
        try store.write("marking document \(document) \(isUnpublished ? "unpublished" : "published")") { db in
            let documentRow = try store.insertingRowID(of: document, in: db)
            try Self.write(isUnpublished, documentRow: documentRow, in: db)
        }
    }

    /// Records whether the document of `documentRow` is unpublished, inside the open write transaction of `db`.
    static func write(_ isUnpublished: Bool, documentRow: Int64, in db: Database) throws {
        let sql =
            isUnpublished
            ? "INSERT INTO unpublished (document) VALUES (?) ON CONFLICT (document) DO NOTHING"
            : "DELETE FROM unpublished WHERE document = ?"
        try db.cachedStatement(sql: sql).execute(arguments: [documentRow])
    }
}
