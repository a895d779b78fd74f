import FolioCore
import Foundation
import GRDB
import Synchronization

/// When a store folds a document's older changes into a compact segment (see `docs/compact-history.md`).
package struct FoldPolicy: Hashable, Sendable {
    /// A document is folded once this many of its changes are rows.
    package var threshold: Int
    /// How many of the newest changes stay rows when a document is folded while the store is open.
    package var tail: Int
    /// When a store closes (or `fold` is called), a document's trailing segments that together hold fewer changes
    /// than this are written again as one with the changes folded after them, so that the segments folded while the
    /// store was in use, and the folds of every close, do not leave a trail of small segments. No fold writes a
    /// segment of more changes than this: a longer run is written as several.
    package var segmentTarget: Int
    /// What ``segmentTarget`` is for a document whose segments hold more changes than ``segmentTarget`` in all (at
    /// most that): a long history is kept in segments of this size, and the first fold at close that finds a history
    /// long writes its larger segments again in pieces of this size (when they and the segments after them hold at
    /// most twice ``segmentTarget`` changes). A reader of an old version decodes only the
    /// segments that hold the changes it needs, each alone, so this bounds what such a read decodes; a short
    /// history stays in one segment, which compresses best.
    package var longHistorySegmentTarget: Int

    /// Creates a policy.
    package init(
        threshold: Int = 2_048, tail: Int = 128, segmentTarget: Int = 32_768, longHistorySegmentTarget: Int = 4_096
    ) {
        self.threshold = max(threshold, 1)
        self.tail = max(tail, 0)
        self.segmentTarget = max(segmentTarget, 1)
        self.longHistorySegmentTarget = min(max(longHistorySegmentTarget, 1), self.segmentTarget)
    }

    /// The target size of the segments of a document whose segments will hold `folded` changes.
    func target(folding folded: Int) -> Int { folded > segmentTarget ? longHistorySegmentTarget : segmentTarget }

    /// The policy of every store: fold at 2,048 rows, keeping the newest 128; grow segments to 32,768 changes, and
    /// keep a longer history in segments of 4,096.
    package static let standard = FoldPolicy()
}

/// How many changes each document has had added as rows since the store last folded it (or opened), so that a fold
/// is considered only when it may be due.
final class FoldCounters: Sendable {
    private let added = Mutex<[Int64: Int]>([:])

    /// Adds `count` to the document's count and returns the new count.
    func add(_ count: Int, to documentRow: Int64) -> Int {
        added.withLock { counts in
            counts[documentRow, default: 0] += count
            return counts[documentRow]!
        }
    }

    func reset(_ documentRow: Int64) {
        _ = added.withLock { $0.removeValue(forKey: documentRow) }
    }

    /// The stamps of the newest changes the last fold of each document folded in this process: what the next fold's
    /// changes name most often, found without decoding a segment.
    private let recent = Mutex<[Int64: [ChangeHash: ChangeStamp]]>([:])

    func recentStamps(of documentRow: Int64) -> [ChangeHash: ChangeStamp] {
        recent.withLock { $0[documentRow] ?? [:] }
    }

    func remember(_ changes: ArraySlice<Change>, of documentRow: Int64) {
        let stamps = Dictionary(changes.map { ($0.hash, ChangeStamp($0)) }) { first, _ in first }
        recent.withLock { $0[documentRow] = stamps }
    }
}

extension ChangeLogStore {
    /// Folds the documents that `count` more rows may have made due, each in a transaction of its own, after the
    /// transaction that added the rows. Folding is upkeep: a fold that fails (the database is busy or full) leaves
    /// the rows as they were, to be folded later, and the caller's committed work stands.
    func foldIfDue(_ added: [(documentRow: Int64, document: DocumentID, count: Int)]) {
        for entry in added where foldCounters.add(entry.count, to: entry.documentRow) >= foldPolicy.threshold {
            _ = try? fold(entry.document, keepingNewest: foldPolicy.tail, minimum: 1, merging: false)
        }
    }

    /// Folds every document's rows into segments but its heads, for documents with at least `minimum` rows or at
    /// least `minimumBytes` of them, then gives the file's free pages back: what closing the store does, so that the
    /// file it leaves holds the history compact.
    ///
    /// - Throws: ``StoreError``.
    public func foldAll(minimum: Int = 16, minimumBytes: Int = 8 << 10) throws(StoreError) {
        let documents = try read("listing the documents with rows") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT d.uuid, count(*), sum(length(c.body)) FROM change c JOIN document d ON d.id = c.document
                        GROUP BY c.document ORDER BY c.document
                        """)
            ).map { (DocumentID(try ColumnDecoder.uuid($0[0])), $0[1] as Int, $0[2] as Int) }
        }
        for (document, rows, bytes) in documents where rows >= minimum || bytes >= minimumBytes {
            try fold(document, keepingNewest: 0)
        }
        try giveBackFreePages()
    }

    /// Folds `document`'s older changes into segments (one, unless they are more than the policy's target: see
    /// `FoldPolicy`), in one transaction, keeping the newest `tail` as rows; does nothing when fewer than `minimum`
    /// rows would be folded. Each segment is decoded again, alone, and every recomputed hash compared with the rows' before the rows
    /// are deleted; then the file gives back the pages they took.
    ///
    /// - Returns: how many changes were folded.
    /// - Throws: ``StoreError``; `corrupt` when a segment does not give back the very changes it folds (nothing is
    ///   changed then).
    @discardableResult
    public func fold(_ document: DocumentID, keepingNewest tail: Int = 0, minimum: Int = 1) throws(StoreError) -> Int {
        try fold(document, keepingNewest: tail, minimum: minimum, merging: true)
    }

    /// Folds as ``fold(_:keepingNewest:minimum:)`` does; when `merging`, the document's trailing segments below the
    /// target size are decoded and written again with the new changes (what closing does), and otherwise the new
    /// changes make segments of their own (what a fold while the store is in use does, so that its cost follows the
    /// rows it folds); either way in segments of at most the target size.
    func fold(_ document: DocumentID, keepingNewest tail: Int, minimum: Int, merging: Bool) throws(StoreError) -> Int {
        let folded = try write("folding the older changes of document \(document)") { db -> Int in
            guard let documentRow = try rowID(of: document, in: db) else { return 0 }
            foldCounters.reset(documentRow)
            var rows: [Change] = []
            var statement = try RawRows(
                db.cachedStatement(sql: "SELECT body FROM change WHERE document = ?"), arguments: [documentRow])
            while let row = try statement.next() { rows.append(try ColumnDecoder.change(row[0], document: document)) }
            // Parents have lower lamport timestamps (the log checks it), so a prefix of this order holds the parents
            // of every change it holds: the folded changes are closed under "made on".
            rows.sort { ($0.lamport, $0.id) < ($1.lamport, $1.id) }
            // Heads stay rows, so that what opening and appending read first is read without a segment. A head has
            // nothing made on it, so leaving it out keeps the folded changes closed under "made on".
            let heads = Set(try self.frontier(of: documentRow, in: db).headHashes)
            let count = rows.count - max(tail, 0)
            let folding = rows.prefix(max(count, 0)).filter { !heads.contains($0.hash) }
            guard !folding.isEmpty, folding.count >= minimum else { return 0 }

            // A segment decodes alone (it carries the stamps of the changes before it that it names). The changes a
            // new run names are among the last fold's, or in the last segment, or rarely in an older one.
            let range = Self.segmentRange(of: documentRow)
            // The document's segments, in order, each with its count (as the file says, within what a run holds).
            var listed: [(id: Int64, count: Int)] = []
            var segmentRows = try RawRows(
                db.cachedStatement(sql: "SELECT id, count FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
                arguments: [range.lowerBound, range.upperBound])
            while let row = try segmentRows.next() {
                listed.append((row[0], min(max(row[1] as Int, 0), ChangeRunCodec.Limits.changes)))
            }
            let trailing = Array(listed.suffix(64).reversed())
            let target = foldPolicy.target(folding: listed.reduce(folding.count) { $0 + $1.count })
            var merged: [(id: Int64, count: Int)] = []
            if merging {
                // A history that has grown long: its segments above the target are written again in pieces, with
                // every segment after them (so that segments stay in the order they name each other), when that
                // is at most twice `segmentTarget` changes in all, as much as a fold of a short history may merge;
                // longer spans (a long history folded by an earlier version) stay as they are.
                let resplit = listed.firstIndex { $0.count > target }.map { listed[$0...] }
                if let resplit, resplit.reduce(folding.count, { $0 + $1.count }) <= 2 * foldPolicy.segmentTarget {
                    merged = resplit.reversed()
                } else {
                    var total = 0
                    for segment in trailing {
                        guard segment.count < target, total + segment.count < target else { break }
                        merged.append(segment)
                        total += segment.count
                    }
                }
            }
            func bytes(of id: Int64) throws -> Data {
                guard
                    let bytes = try Data.fetchOne(
                        db.cachedStatement(sql: "SELECT bytes FROM segment WHERE id = ?"), arguments: [id])
                else { throw StoreError(.corrupt, "segment \(id & 0xFFFF_FFFF) of document \(document) vanished") }
                return bytes
            }
            func decodeAlone(_ id: Int64) throws -> [Change] {
                try decodeSegment(try bytes(of: id), id: id, of: document) { _ in nil }
            }
            // What the merged segments name outside themselves, they carry the stamps of.
            var earlierChanges: [Change] = []
            var recent = foldCounters.recentStamps(of: documentRow)
            for segment in merged.reversed() {
                let segmentBytes = try bytes(of: segment.id)
                earlierChanges += try decodeSegment(segmentBytes, id: segment.id, of: document) { _ in nil }
                recent.merge((try? ChangeRunCodec.carriedStamps(segmentBytes)) ?? [:]) { kept, _ in kept }
            }
            var lastSegment: [ChangeHash: ChangeStamp]?
            var older: DecodedSegments?
            func stamp(_ hash: ChangeHash) -> ChangeStamp? {
                if let found = recent[hash] { return found }
                if lastSegment == nil {
                    let last = trailing.first.flatMap { try? decodeAlone($0.id) } ?? []
                    lastSegment = Dictionary(last.map { ($0.hash, ChangeStamp($0)) }) { first, _ in first }
                }
                if let found = lastSegment?[hash] { return found }
                if older == nil { older = try? self.segments(of: document, documentRow: documentRow, in: db) }
                return older?.change(hash).map(ChangeStamp.init)
            }
            // The run is written as segments of at most the target size, so that no fold, however many rows it
            // takes at once (a bulk ingest), leaves a segment that a reader must decode in one piece beyond that size.
            let run = earlierChanges + folding
            // Numbers go on from the last segment, or from those of a removed local copy (never used twice).
            var floor: Int64 = 0
            if trailing.isEmpty {
                let statement = try db.cachedStatement(sql: "SELECT segment_floor FROM document WHERE id = ?")
                floor = try Int64.fetchOne(statement, arguments: [documentRow]) ?? 0
            }
            let first = max(trailing.first.map { $0.id & 0xFFFF_FFFF } ?? 0, floor) + 1
            var pieces: [(id: Int64, changes: [Change], bytes: [UInt8])] = []
            for (index, start) in stride(from: 0, to: run.count, by: target).enumerated() {
                let end = min(start + target, run.count)
                // Usually the whole run, which is then not copied.
                let changes = end - start == run.count ? run : Array(run[start..<end])
                let number = first + Int64(index)
                guard number <= 0xFFFF_FFFF else {
                    throw StoreError(.corrupt, "document \(document) has used up its segment numbers")
                }
                let id = range.lowerBound | number
                let bytes: [UInt8]
                do {
                    bytes = try ChangeRunCodec.encode(changes, of: document, embeddingOutside: true, outside: stamp)
                } catch {
                    throw StoreError(.corrupt, "the changes of document \(document) cannot be folded: \(error)")
                }
                let rebuilt = try decodeSegment(Data(bytes), id: id, of: document) { _ in nil }
                guard rebuilt.map(\.hash) == changes.map(\.hash) else {
                    throw StoreError(
                        .corrupt,
                        "the segment folding \(changes.count) changes of document \(document) does not give them back exactly; nothing was folded"
                    )
                }
                // A next piece names these changes outside itself.
                if end < run.count {
                    for change in changes { recent[change.hash] = ChangeStamp(change) }
                }
                pieces.append((id, changes, bytes))
            }

            for segment in merged {
                try db.cachedStatement(sql: "DELETE FROM segment WHERE id = ?").execute(arguments: [segment.id])
            }
            for piece in pieces {
                try db.cachedStatement(
                    sql: "INSERT INTO segment (id, count, seqs, bytes, lifecycle) VALUES (?, ?, ?, ?, ?)"
                )
                .execute(arguments: [
                    piece.id, piece.changes.count, SegmentSeqs(piece.changes).encoded, Data(piece.bytes),
                    Self.lifecycleCopies(of: piece.changes),
                ])
            }
            var highest: [DeviceID: UInt64] = [:]
            for change in folding { highest[change.id.device] = max(highest[change.id.device] ?? 0, change.id.seq) }
            let mark = try db.cachedStatement(sql: "UPDATE frontier SET folded = ? WHERE document = ? AND device = ?")
            let delete = try db.cachedStatement(
                sql: "DELETE FROM change WHERE document = ? AND device = ? AND seq <= ?")
            for device in highest.keys.sorted() {
                guard let deviceRow = try rowID(of: device, in: db) else {
                    throw StoreError(.corrupt, "a folded change names device \(device), which has no row")
                }
                try mark.execute(arguments: [Int64(highest[device]!), documentRow, deviceRow])
                try delete.execute(arguments: [documentRow, deviceRow, Int64(highest[device]!)])
                guard db.changesCount == folding.count(where: { $0.id.device == device }) else {
                    throw StoreError(
                        .corrupt, "the rows of device \(device) in document \(document) are not the changes folded")
                }
            }
            // The decoded segments kept in memory are read again when next needed.
            segmentCache.forget(documentRow)
            db.afterNextTransaction { _ in
                self.segmentCache.forget(documentRow)
                self.foldCounters.remember(run.suffix(1_024), of: documentRow)
            }
            return folding.count
        }
        if folded > 0 { try giveBackFreePages() }
        return folded
    }

    /// The canonical encodings of the lifecycle changes among `changes` (a varint count, then each length-prefixed):
    /// kept beside a segment so that the few lifecycle changes, which a library reads for every document it lists,
    /// are read without decoding the segment.
    static func lifecycleCopies(of changes: some Collection<Change>) -> Data {
        let lifecycle = changes.filter { if case .lifecycle = $0.kind { true } else { false } }
        var writer = BinaryWriter(capacity: 16 + lifecycle.count * 96)
        writer.write(varint: UInt64(lifecycle.count))
        for change in lifecycle { writer.write(lengthPrefixed: change.encoded()) }
        return Data(writer.bytes)
    }

    /// The lifecycle changes of `document` (row `documentRow`) its segments keep copies of, decoded (which
    /// recomputes their hashes).
    func foldedLifecycle(of document: DocumentID, documentRow: Int64, in db: Database) throws -> [Change] {
        let range = Self.segmentRange(of: documentRow)
        var rows = try RawRows(
            db.cachedStatement(sql: "SELECT lifecycle FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound])
        var changes: [Change] = []
        while let row = try rows.next() {
            let copies: Data = row[0]
            do {
                try BinaryReader.readingWhole(copies, "a segment's lifecycle changes") { reader throws(CodecError) in
                    let count = try reader.nextCount(
                        "their number", elementSize: 1, limit: ChangeRunCodec.Limits.changes)
                    for _ in 0..<count {
                        let body = try reader.nextLengthPrefixed("a lifecycle change", limit: 1 << 20)
                        changes.append(try Change(checking: body, document: document))
                    }
                }
            } catch {
                throw StoreError(.corrupt, "a segment's copies of lifecycle changes do not decode: \(error)")
            }
        }
        return changes
    }

    /// Hands the file's free pages back to the file system (the store's file is made with incremental vacuum; in
    /// a file made without it, this does nothing).
    private func giveBackFreePages() throws(StoreError) {
        do {
            try database.writeWithoutTransaction { db in
                try checkAlive()
                try db.execute(sql: "PRAGMA incremental_vacuum")
            }
        } catch {
            throw StoreError.translating(error, while: "giving the free pages of \(url.path) back")
        }
    }
}
