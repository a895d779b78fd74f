import FolioCore
import Foundation
import GRDB

/// A stored snapshot of a document's state at a vector: replaying the changes after it gives the current state.
public struct Checkpoint: Hashable, Sendable {
    /// The document.
    public var document: DocumentID
    /// The changes the snapshot includes.
    public var vector: VersionVector
    /// The snapshot, in the model's encoding.
    public var contents: Data
    /// When it was taken (the local clock).
    public var createdAt: Timestamp
}

/// The checkpoints of the documents of a ``ChangeLogStore`` (see ``ChangeLogStore/checkpoints``), and the
/// content-addressed blobs that hold their contents, in the store's file. Every call is one transaction of the store.
public struct CheckpointStore: Sendable {
    let store: ChangeLogStore

    /// Stores `contents` in content-addressed storage, once however often it is stored. A blob with the hash of a
    /// checkpoint's contents or files goes with the last checkpoint that names it (see ``spacing``).
    ///
    /// - Returns: the contents' hash, by which ``blob(_:)`` finds them.
    /// - Throws: ``StoreError``.
    @discardableResult
    public func putBlob(_ contents: Data) throws(StoreError) -> ContentHash {
        let hash = ContentHash(hashing: contents)
        try store.write("storing a blob of \(contents.count) bytes") { db in
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO blob (hash, bytes) VALUES (?, ?)")
                .execute(arguments: [hash.data, StorageCompression.packValue(contents)])
        }
        return hash
    }

    /// The contents stored under `hash`, if any.
    ///
    /// - Throws: ``StoreError`` with code `corrupt` when the stored bytes no longer match their hash.
    public func blob(_ hash: ContentHash) throws(StoreError) -> Data? {
        let bytes = try store.read("reading blob \(hash.hex.prefix(12))") { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT bytes FROM blob WHERE hash = ?"), arguments: [hash.data])
                .map { stored throws(StoreError) in try StorageCompression.unpackValue(stored) }
        }
        if let bytes, ContentHash(hashing: bytes) != hash {
            throw StoreError(.corrupt, "blob \(hash.hex.prefix(12)) does not match its hash: its bytes were damaged")
        }
        return bytes
    }

    /// Saves a snapshot of `document` at `vector`, and drops the older checkpoints of its line of history it
    /// replaces: all but the newest of them and the newest of each earlier stretch of `spacing` changes (see
    /// ``spacing``; 0 keeps every checkpoint).
    ///
    /// - Throws: ``StoreError`` with code `checkpoint` when `vector` names changes the log does not have.
    public func save(
        of document: DocumentID, at vector: VersionVector, contents: Data, keepingApart spacing: Int = Self.spacing
    ) throws(StoreError) {
        let hash = ContentHash(hashing: contents)
        let now = store.clock.now()
        // A package with large files is stored as a manifest and those files (see CheckpointManifest).
        let split = CheckpointManifest.splitting(contents)
        try store.write("saving a checkpoint of document \(document)") { db in
            guard let documentRow = try store.rowID(of: document, in: db) else {
                throw StoreError(
                    .unknownDocument,
                    "document \(document) has no change in this store, so no checkpoint of it can be saved")
            }
            let known = try store.frontier(of: documentRow, in: db).vector
            guard vector.isContained(in: known) else {
                throw StoreError(
                    .checkpoint,
                    "a checkpoint at \(vector) names changes the log of document \(document) lacks (it has \(known))")
            }
            let insertBlob = try db.cachedStatement(sql: "INSERT OR IGNORE INTO blob (hash, bytes) VALUES (?, ?)")
            var manifestHash: ContentHash?
            if let (manifest, files) = split {
                // Each large file once, whatever other checkpoints or documents hold it, then the manifest.
                for (fileHash, bytes) in files.sorted(by: { $0.key < $1.key }) {
                    try insertBlob.execute(arguments: [fileHash.data, StorageCompression.packValue(bytes)])
                }
                let encoded = manifest.encoded()
                manifestHash = ContentHash(hashing: encoded)
                try insertBlob.execute(arguments: [manifestHash!.data, StorageCompression.packValue(encoded)])
            } else {
                try insertBlob.execute(arguments: [hash.data, StorageCompression.packValue(contents)])
            }
            try db.cachedStatement(
                sql: """
                    INSERT INTO checkpoint (document, vector, change_count, contents_hash, manifest_hash, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            )
            .execute(arguments: [
                documentRow, Data(vector.encoded()), Int64(vector.changeCount), hash.data, manifestHash?.data,
                now.millisecondsSince1970,
            ])
            let checkpoint = db.lastInsertedRowID
            let insertFile = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO checkpoint_file (checkpoint, hash) VALUES (?, ?)")
            for member in split?.manifest.members ?? [] {
                try insertFile.execute(arguments: [checkpoint, member.hash.data])
            }
            try Self.dropCheckpoints(
                replacedBy: checkpoint, at: vector, of: documentRow, within: spacing, in: db)
        }
    }

    /// The checkpoint of `document` with the most changes among those within `limit` (by default, any).
    ///
    /// Replaying the changes of `limit` that it lacks, in causal order, gives the state at `limit`.
    ///
    /// - Throws: ``StoreError``.
    public func latest(of document: DocumentID, within limit: VersionVector? = nil) throws(StoreError) -> Checkpoint? {
        try store.read("reading the checkpoints of document \(document)") { db in
            guard let documentRow = try store.rowID(of: document, in: db) else { return nil }
            var rows = try RawRows(
                db.cachedStatement(
                    sql: """
                        SELECT c.vector, c.created_at, b.bytes, c.contents_hash, m.bytes, c.manifest_hash FROM checkpoint c
                        LEFT JOIN blob b ON b.hash = c.contents_hash
                        LEFT JOIN blob m ON m.hash = c.manifest_hash
                        WHERE c.document = ? ORDER BY c.change_count DESC, c.id DESC
                        """),
                arguments: [documentRow])
            while let row = try rows.next() {
                let vector = try VersionVector(decoding: row[0] as Data)
                if let limit, !vector.isContained(in: limit) { continue }
                let expected = try ColumnDecoder.contentHash(row[3])
                // Contents read lately were checked against their hash already: a document replays from the same
                // checkpoint several times while it looks at its versions.
                if let contents = store.decodedContents.withLock({ $0.value(expected) }) {
                    return Checkpoint(
                        document: document, vector: vector, contents: contents,
                        createdAt: Timestamp(millisecondsSince1970: row[1]))
                }
                let manifest: Data?? = (row[5] as Data?).map { _ in row[4] as Data? }
                guard let contents = try Self.contents(whole: row[2], manifest: manifest, in: db),
                    ContentHash(hashing: contents) == expected
                else {
                    throw StoreError(
                        .corrupt, "the checkpoint of document \(document) at \(vector) has lost or damaged contents")
                }
                store.decodedContents.withLock { $0.insert(contents, for: expected, size: contents.count) }
                return Checkpoint(
                    document: document, vector: vector, contents: contents,
                    createdAt: Timestamp(millisecondsSince1970: row[1]))
            }
            return nil
        }
    }

    /// The stretch of history, in changes, in which the checkpoints of one line of history are thinned to one, by
    /// default: saving a checkpoint drops the older ones whose changes it includes (its line) but the newest of them
    /// and the newest of each earlier stretch of this many changes (counted from the document's first change), with
    /// the blobs no other checkpoint names. A document closed after a few changes each time would otherwise keep a
    /// checkpoint per close. A document takes a checkpoint at least every 1,000 changes, so the ones left are at most
    /// about twice this many changes apart, and the state at any version costs at most that many changes to replay
    /// from one.
    public static var spacing: Int { 1_000 }

    /// Drops the checkpoints of a document (its row `document`) that the checkpoint `newer` (at `vector`) replaces
    /// (see ``spacing``; `spacing` 0 or less drops none), then deletes the blobs they named that no other checkpoint
    /// names.
    static func dropCheckpoints(
        replacedBy newer: Int64, at vector: VersionVector, of document: Int64, within spacing: Int, in db: Database
    ) throws {
        guard spacing > 0 else { return }
        let spacing = Int64(spacing)
        var rows = try RawRows(
            db.cachedStatement(
                sql: """
                    SELECT id, vector, change_count, contents_hash, manifest_hash FROM checkpoint
                    WHERE document = ? AND id <> ? AND change_count <= ? ORDER BY change_count, id
                    """),
            arguments: [document, newer, Int64(clamping: vector.changeCount)])
        // The older checkpoints of this one's line (its vector contains theirs), oldest first.
        var line: [(id: Int64, count: Int64, hashes: [Data])] = []
        while let row = try rows.next() {
            guard (try? VersionVector(decoding: row[1] as Data))?.isContained(in: vector) == true else { continue }
            line.append((row[0], row[2], [row[3] as Data] + ((row[4] as Data?).map { [$0] } ?? [])))
        }
        // The newest of them stays whatever its distance: the version a device closed at is where its next offline
        // branch forks, and a merge of that branch starts from the checkpoint there. Of the others, the newest of each
        // earlier stretch of `spacing` changes stays, so that every version has one at most about twice that behind
        // it; the others of the new one's stretch go.
        var dropped: [Int64] = []
        var candidates: Set<Data> = []
        let stretch = Int64(clamping: vector.changeCount) / spacing
        for (index, checkpoint) in line.enumerated().dropLast() {
            let own = checkpoint.count / spacing
            guard own == stretch || line[index + 1].count / spacing == own else { continue }
            dropped.append(checkpoint.id)
            candidates.formUnion(checkpoint.hashes)
        }
        guard !dropped.isEmpty else { return }
        let files = try db.cachedStatement(sql: "SELECT hash FROM checkpoint_file WHERE checkpoint = ?")
        for id in dropped {
            for hash in try Data.fetchAll(files, arguments: [id]) { candidates.insert(hash) }
            try db.cachedStatement(sql: "DELETE FROM checkpoint_file WHERE checkpoint = ?").execute(arguments: [id])
            try db.cachedStatement(sql: "DELETE FROM checkpoint WHERE id = ?").execute(arguments: [id])
        }
        // A statement per few hundred blobs, each reading the checkpoints and their files once (no index of them by
        // hash: a store's few checkpoints do not pay for the pages one costs).
        let sorted = candidates.sorted { $0.lexicographicallyPrecedes($1) }
        // A blob a change refers to stays too, unless it was let go (`BlobTables`, once a change refers to one).
        let referred =
            try BlobTables.exist(in: db)
            ? "AND hash NOT IN (SELECT hash FROM change_blob WHERE hash NOT IN (SELECT hash FROM collected_blob))" : ""
        for start in stride(from: 0, to: sorted.count, by: 500) {
            let part = Array(sorted[start..<min(start + 500, sorted.count)])
            let marks = Array(repeating: "?", count: part.count).joined(separator: ", ")
            try db.execute(
                sql: """
                    DELETE FROM blob WHERE hash IN (\(marks))
                    AND hash NOT IN (SELECT contents_hash FROM checkpoint)
                    AND hash NOT IN (SELECT manifest_hash FROM checkpoint WHERE manifest_hash IS NOT NULL)
                    AND hash NOT IN (SELECT hash FROM checkpoint_file)
                    \(referred)
                    """, arguments: StatementArguments(part))
        }
    }

    /// A checkpoint's contents from the blobs a checkpoint row names: `whole`, the blob of its contents hash, or when
    /// it has a manifest, `manifest` (`.some(nil)` when the manifest's blob is missing) put back together with its
    /// files. `nil` when the blob is missing or does not unpack.
    static func contents(whole: Data?, manifest: Data??, in db: Database) throws -> Data? {
        guard let manifest else { return whole.flatMap { try? StorageCompression.unpackValue($0) } }
        guard let stored = manifest, let bytes = try? StorageCompression.unpackValue(stored) else { return nil }
        let statement = try db.cachedStatement(sql: "SELECT bytes FROM blob WHERE hash = ?")
        return try CheckpointManifest(decoding: bytes).assembled { hash throws(StoreError) in
            do {
                return try Data.fetchOne(statement, arguments: [hash.data]).map {
                    stored throws(StoreError) in try StorageCompression.unpackValue(stored)
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.corrupt, "a checkpoint's file cannot be read: \(error)")
            }
        }
    }
}
