import FolioCore
import Foundation
import GRDB

/// What ``ChangeLogStore/storeBlobs(_:)`` did with the blobs it was given.
public struct BlobIntake: Hashable, Sendable {
    /// The blobs stored, in the order given: a change in the log refers to each, and the store lacked it.
    public var stored: [BlobReference] = []
    /// Blobs the store already held: ignored.
    public var duplicates = 0
    /// Blobs no change in the log refers to, collected ones (``ChangeLogStore/collectBlobs(of:)``), or larger than
    /// ``StoreLimits/blobBytes``: not kept. A store takes only the blobs its changes ask for, so a peer cannot fill
    /// it with others.
    public var refused: [BlobReference] = []
    /// The documents with a change that refers to a stored blob, in identity order: those that fill in.
    public var documents: [DocumentID] = []

    /// Creates an empty intake.
    public init() {}
}

extension ChangeLogStore {
    /// Stores blobs that changes in the log refer to and the store lacks, in one transaction; the rest are
    /// ignored (held already) or refused (nothing refers to them, or beyond ``StoreLimits/blobBytes``). A blob is
    /// known by its bytes' hash and size, so it cannot be stored under a reference that is not its own.
    ///
    /// - Throws: ``StoreError`` (`database`); nothing is stored then.
    @discardableResult
    public func storeBlobs(_ blobs: [Data]) throws(StoreError) -> BlobIntake {
        guard !blobs.isEmpty else { return BlobIntake() }
        let references = blobs.map(BlobReference.init(to:))
        return try write("storing \(blobs.count) blobs") { db in
            var intake = BlobIntake()
            guard try BlobTables.exist(in: db) else {
                intake.refused = references
                return intake
            }
            var documents: Set<Int64> = []
            let held = try db.cachedStatement(sql: "SELECT 1 FROM blob WHERE hash = ?")
            let collected = try db.cachedStatement(sql: "SELECT 1 FROM collected_blob WHERE hash = ?")
            let referrers = try db.cachedStatement(
                sql: "SELECT DISTINCT document FROM change_blob WHERE hash = ? AND size = ?")
            let insert = try db.cachedStatement(sql: "INSERT INTO blob (hash, bytes) VALUES (?, ?)")
            for (reference, bytes) in zip(references, blobs) {
                if try Bool.fetchOne(held, arguments: [reference.hash.data]) == true {
                    intake.duplicates += 1
                    continue
                }
                let referring = try Int64.fetchAll(referrers, arguments: [reference.hash.data, reference.size])
                let wasCollected = try Bool.fetchOne(collected, arguments: [reference.hash.data]) == true
                guard reference.size <= limits.blobBytes, !referring.isEmpty, !wasCollected else {
                    intake.refused.append(reference)
                    continue
                }
                try insert.execute(arguments: [reference.hash.data, StorageCompression.packValue(bytes)])
                intake.stored.append(reference)
                documents.formUnion(referring)
            }
            let uuid = try db.cachedStatement(sql: "SELECT uuid FROM document WHERE id = ?")
            var identified: [DocumentID] = []
            for row in documents.sorted() {
                guard let stored = try Data.fetchOne(uuid, arguments: [row]) else { continue }
                identified.append(DocumentID(try ColumnDecoder.uuid(stored)))
            }
            intake.documents = identified.sorted()
            return intake
        }
    }

    /// The blobs of `references` the store holds, by reference; those it lacks are absent, and so is a reference
    /// whose hash the store holds with another size (a reference no honest change makes: its member stays
    /// unavailable).
    ///
    /// - Throws: ``StoreError`` with code `corrupt` when stored bytes no longer match their hash.
    public func blobs(_ references: some Sequence<BlobReference>) throws(StoreError) -> [BlobReference: Data] {
        let wanted = Array(Set(references)).sorted()
        guard !wanted.isEmpty else { return [:] }
        return try read("reading \(wanted.count) blobs") { db in
            let statement = try db.cachedStatement(sql: "SELECT bytes FROM blob WHERE hash = ?")
            var found: [BlobReference: Data] = [:]
            for reference in wanted {
                guard let stored = try Data.fetchOne(statement, arguments: [reference.hash.data]) else { continue }
                let bytes = try StorageCompression.unpackValue(stored)
                guard ContentHash(hashing: bytes) == reference.hash else {
                    throw StoreError(.corrupt, "\(reference) does not match the bytes stored for it")
                }
                if bytes.count == reference.size { found[reference] = bytes }
            }
            return found
        }
    }

    /// A lookup holding the blobs `changes` refer to that the store holds, for decoding their operations and
    /// contents (`DocumentOperation.decodeGroup(_:blobs:)`); `nil` when no change refers to a blob.
    ///
    /// - Throws: ``StoreError``, as ``blobs(_:)``.
    public func blobLookup(for changes: some Sequence<Change>) throws(StoreError) -> BlobLookup? {
        var references: [BlobReference] = []
        for change in changes { references += change.blobs }
        guard !references.isEmpty else { return nil }
        let lookup = BlobLookup()
        for (reference, bytes) in try blobs(references) { lookup.insert(bytes, as: reference) }
        return lookup
    }

    /// The blobs that changes of `document` (of every document, when `nil`) refer to and the store lacks, in
    /// ascending order, at most `limit` of them.
    ///
    /// - Throws: ``StoreError``.
    public func missingBlobs(of document: DocumentID? = nil, limit: Int = .max) throws(StoreError) -> [BlobReference] {
        try read("listing missing blobs") { db in
            guard try BlobTables.exist(in: db) else { return [] }
            var sql = """
                SELECT DISTINCT c.hash, c.size FROM change_blob c
                WHERE NOT EXISTS (SELECT 1 FROM blob b WHERE b.hash = c.hash)
                AND NOT EXISTS (SELECT 1 FROM collected_blob k WHERE k.hash = c.hash)
                """
            var arguments: StatementArguments = []
            if let document {
                guard let row = try rowID(of: document, in: db) else { return [] }
                sql += " AND c.document = ?"
                arguments += [row]
            }
            sql += " ORDER BY c.hash, c.size LIMIT ?"
            arguments += [Int64(clamping: limit)]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row throws in
                let size = try ColumnDecoder.unsigned(row[1], "blob size")
                guard size <= UInt64(Int.max) else { throw StoreError(.corrupt, "a stored blob size is \(size)") }
                return BlobReference(hash: try ColumnDecoder.contentHash(row[0]), size: Int(size))
            }
        }
    }

    /// Whether the store holds the blob.
    ///
    /// - Throws: ``StoreError``.
    public func hasBlob(_ reference: BlobReference) throws(StoreError) -> Bool {
        try read("looking for \(reference)") { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM blob WHERE hash = ?"), arguments: [reference.hash.data])
                == true
        }
    }

    /// Stores, in the transaction of a local append, the bytes of blobs the appended changes refer to.
    ///
    /// - Throws: `invalidChange` when bytes are not their reference's.
    func storeAppendedBlobs(_ blobs: [BlobReference: Data], in db: Database) throws {
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO blob (hash, bytes) VALUES (?, ?)")
        for (reference, bytes) in blobs.sorted(by: { $0.key < $1.key }) {
            guard reference.isReferenced(by: bytes) else {
                throw StoreError(.invalidChange, "the bytes given for \(reference) are not that blob's")
            }
            try insert.execute(arguments: [reference.hash.data, StorageCompression.packValue(bytes)])
        }
    }
}

extension ChangeLogStore {
    /// Whether a change of `document` refers to a blob.
    ///
    /// - Throws: ``StoreError``.
    public func refersToBlobs(_ document: DocumentID) throws(StoreError) -> Bool {
        try read("looking for blobs of \(document)") { db in
            guard try BlobTables.exist(in: db), let row = try rowID(of: document, in: db) else { return false }
            return try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM change_blob WHERE document = ? LIMIT 1"), arguments: [row])
                == true
        }
    }
}

/// How many blobs a store holds and the bytes they take in its file.
public struct BlobUsage: Hashable, Sendable {
    /// The blobs held: each once, however many changes, checkpoints and documents refer to it.
    public var count: Int
    /// The bytes their rows hold (as stored: deflated when that was smaller).
    public var bytes: Int
}

extension ChangeLogStore {
    /// How many blobs the store holds and the bytes they take.
    ///
    /// - Throws: ``StoreError``.
    public func blobUsage() throws(StoreError) -> BlobUsage {
        try read("counting blobs") { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(length(bytes)), 0) FROM blob")
            return BlobUsage(count: row?[0] ?? 0, bytes: row?[1] ?? 0)
        }
    }
}

extension ChangeLogStore {
    /// Of `references`, those a change of one of `documents` refers to: what a server sends a connection that may
    /// sync those documents alone.
    ///
    /// - Throws: ``StoreError``.
    public func blobs(_ references: [BlobReference], referencedBy documents: [DocumentID]) throws(StoreError)
        -> Set<BlobReference>
    {
        guard !references.isEmpty, !documents.isEmpty else { return [] }
        return try read("looking for the documents' blobs") { db in
            guard try BlobTables.exist(in: db) else { return [] }
            let rows = try Set(documents).sorted().compactMap { try rowID(of: $0, in: db) }
            let statement = try db.cachedStatement(
                sql: "SELECT document FROM change_blob WHERE hash = ? AND size = ?")
            var found: Set<BlobReference> = []
            let wanted = Set(rows)
            for reference in Set(references) {
                let referrers = try Int64.fetchAll(
                    statement, arguments: [Data(reference.hash.bytes), Int64(reference.size)])
                if referrers.contains(where: wanted.contains) { found.insert(reference) }
            }
            return found
        }
    }

    /// Of `references`, those the store lacks, in order (without repeats).
    ///
    /// - Throws: ``StoreError``.
    public func lacking(_ references: [BlobReference]) throws(StoreError) -> [BlobReference] {
        guard !references.isEmpty else { return [] }
        return try read("looking for \(references.count) blobs") { db in
            let statement = try db.cachedStatement(sql: "SELECT 1 FROM blob WHERE hash = ?")
            var seen: Set<BlobReference> = []
            return try references.filter { reference in
                guard seen.insert(reference).inserted else { return false }
                return try Bool.fetchOne(statement, arguments: [reference.hash.data]) != true
            }
        }
    }
}
