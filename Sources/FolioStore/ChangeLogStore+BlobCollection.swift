import FolioCore
import Foundation
import GRDB

/// What ``ChangeLogStore/collectBlobs(of:)`` let go.
public struct BlobCollection: Hashable, Sendable {
    /// The blobs dropped, ascending.
    public var collected: [BlobReference] = []
    /// Their bytes.
    public var bytes: Int { collected.reduce(0) { $0 + $1.size } }

    /// Creates an empty collection.
    public init() {}
}

extension ChangeLogStore {
    /// Lets go of the blobs that only discarded versions of `document` refer to: blobs every change that refers to
    /// them (in any document) was discarded by a resolution of `document` (in the past of a head it discarded and of
    /// none it chose). A blob a checkpoint still holds goes with the checkpoint. A blob let go is needed again
    /// (``uncollect(_:)``) as soon as a new change refers to it, or a document shows it. The changes stay in the log (history is never rewritten), so
    /// those versions read with the members unavailable; the blobs are not asked of peers again, and a peer that
    /// offers one is refused. What `Document.removeOtherVersions()` calls after settling.
    ///
    /// - Complexity: O(the document's changes): it reads the document's resolutions and the changes that refer to
    ///   blobs.
    /// - Throws: ``StoreError``; nothing is dropped then.
    @discardableResult
    public func collectBlobs(of document: DocumentID) throws(StoreError) -> BlobCollection {
        let all = try changes(of: document)
        let resolutions = all.compactMap { change -> Resolution? in
            if case .resolution(let resolution) = change.kind, !resolution.discarded.isEmpty { return resolution }
            return nil
        }
        let referring = all.filter { !$0.blobs.isEmpty }
        guard !resolutions.isEmpty, !referring.isEmpty else { return BlobCollection() }
        let byHash = Dictionary(all.map { ($0.hash, $0) }, uniquingKeysWith: { first, _ in first })
        // The changes a resolution discarded: in the past of a discarded head, in the past of no chosen one.
        func isDiscarded(_ change: Change) -> Bool {
            resolutions.contains { resolution in
                let discards = resolution.discarded.contains { byHash[$0]?.vector.contains(change.id) ?? false }
                let keeps = resolution.chosen.contains { byHash[$0]?.vector.contains(change.id) ?? true }
                return discards && !keeps
            }
        }
        let discarded = Set(referring.filter(isDiscarded).map(\.hash))
        let candidates = Set(referring.filter { discarded.contains($0.hash) }.flatMap(\.blobs))
        guard !candidates.isEmpty else { return BlobCollection() }
        return try write("collecting the blobs of discarded versions of \(document)") { db in
            var collection = BlobCollection()
            guard try BlobTables.exist(in: db) else { return collection }
            let referrers = try db.cachedStatement(sql: "SELECT change FROM change_blob WHERE hash = ?")
            let inCheckpoint = try db.cachedStatement(
                sql: """
                    SELECT 1 FROM checkpoint_file WHERE hash = ?1
                    UNION ALL SELECT 1 FROM checkpoint WHERE contents_hash = ?1 OR manifest_hash = ?1 LIMIT 1
                    """)
            for reference in candidates.sorted() {
                let changes = try Data.fetchAll(referrers, arguments: [reference.hash.data])
                guard try changes.allSatisfy({ discarded.contains(try ColumnDecoder.changeHash($0)) }) else { continue }
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO collected_blob (hash) VALUES (?)")
                    .execute(arguments: [reference.hash.data])
                if try Bool.fetchOne(inCheckpoint, arguments: [reference.hash.data]) != true {
                    try db.cachedStatement(sql: "DELETE FROM blob WHERE hash = ?")
                        .execute(arguments: [reference.hash.data])
                }
                collection.collected.append(reference)
            }
            return collection
        }
    }
}

extension ChangeLogStore {
    /// Takes back the letting go of `references` (``collectBlobs(of:)``): they are missing again, asked of peers
    /// and taken when offered. What a document does when a version it shows needs a blob that was let go (another
    /// device chose the discarded version, say).
    ///
    /// - Throws: ``StoreError``.
    public func uncollect(_ references: [BlobReference]) throws(StoreError) {
        guard !references.isEmpty else { return }
        // Read first: a document showing a blob that is simply missing (the usual case) costs no write.
        let collected = try read("looking for collected blobs") { db in
            guard try BlobTables.exist(in: db) else { return false }
            let statement = try db.cachedStatement(sql: "SELECT 1 FROM collected_blob WHERE hash = ?")
            return try references.contains { try Bool.fetchOne(statement, arguments: [$0.hash.data]) == true }
        }
        guard collected else { return }
        try write("taking back the collection of \(references.count) blobs") { db in
            guard try BlobTables.exist(in: db) else { return }
            let statement = try db.cachedStatement(sql: "DELETE FROM collected_blob WHERE hash = ?")
            for reference in references { try statement.execute(arguments: [reference.hash.data]) }
        }
    }
}
