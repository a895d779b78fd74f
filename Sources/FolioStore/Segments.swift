import FolioCore
import Foundation
import GRDB
import Synchronization

/// A document's compact segments, decoded: every change they hold, in the order they hold them, with each change's
/// hash recomputed from its canonical encoding (see `docs/compact-history.md`).
struct DecodedSegments: Sendable {
    /// The segments' rows, in order.
    var ids: [Int64] = []
    /// How many changes each segment holds, in the order of `ids`.
    var counts: [Int] = []
    /// The changes, segment after segment.
    var changes: [Change] = []
    var byID: [ChangeID: Int] = [:]
    var byHash: [ChangeHash: Int] = [:]

    static let empty = DecodedSegments()

    func change(_ id: ChangeID) -> Change? { byID[id].map { changes[$0] } }
    func change(_ hash: ChangeHash) -> Change? { byHash[hash].map { changes[$0] } }

    /// Adds the changes of segment `id`, decoded.
    mutating func append(segment id: Int64, changes decoded: [Change]) {
        ids.append(id)
        counts.append(decoded.count)
        for change in decoded {
            byID[change.id] = changes.count
            byHash[change.hash] = changes.count
            changes.append(change)
        }
    }
}

/// The decoded segments of the documents read most recently, so that reading old changes decodes their segments
/// once. Segments never change once written (a fold may replace a document's last one with a larger one, which has
/// another row): an entry is reused when the file still lists the same segments.
final class SegmentCache: Sendable {
    /// How many documents' segments are kept decoded.
    static let documentLimit = 8

    private struct State {
        var documents: [Int64: DecodedSegments] = [:]
        /// Document rows, least recently used first.
        var order: [Int64] = []
    }
    private let state = Mutex(State())

    func cached(_ documentRow: Int64) -> DecodedSegments? {
        state.withLock { $0.documents[documentRow] }
    }

    func remember(_ segments: DecodedSegments, of documentRow: Int64) {
        state.withLock { state in
            state.documents[documentRow] = segments
            state.order.removeAll { $0 == documentRow }
            state.order.append(documentRow)
            while state.order.count > Self.documentLimit {
                state.documents[state.order.removeFirst()] = nil
            }
        }
    }

    func forget(_ documentRow: Int64) {
        state.withLock { state in
            state.documents[documentRow] = nil
            state.order.removeAll { $0 == documentRow }
        }
    }
}

extension ChangeLogStore {
    /// A segment's row id: the document's row in the high 32 bits and the segment's number in the low ones, so that
    /// a document's segments are one range of the table's own key, in order, without an index of their own.
    static func segmentRange(of documentRow: Int64) -> ClosedRange<Int64> {
        (documentRow << 32)...(documentRow << 32 | 0xFFFF_FFFF)
    }

    /// The segments of `document` (row `documentRow`) as `db` holds them, decoded; from the cache when it holds
    /// the same ones.
    ///
    /// - Throws: `StoreError` (`corrupt`) when a segment does not decode or names a change no earlier segment holds.
    func segments(of document: DocumentID, documentRow: Int64, in db: Database) throws -> DecodedSegments {
        let range = Self.segmentRange(of: documentRow)
        let ids = try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound])
        guard !ids.isEmpty else { return .empty }
        var segments = DecodedSegments()
        if let cached = segmentCache.cached(documentRow), cached.ids.count <= ids.count,
            Array(ids.prefix(cached.ids.count)) == cached.ids
        {
            if cached.ids.count == ids.count { return cached }
            segments = cached
        }
        for id in ids.dropFirst(segments.ids.count) {
            guard
                let bytes = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT bytes FROM segment WHERE id = ?"), arguments: [id])
            else { throw StoreError(.corrupt, "segment \(id) of document \(document) vanished while it was read") }
            let earlier = segments
            segments.append(
                segment: id,
                changes: try decodeSegment(bytes, id: id, of: document) { earlier.change($0).map(ChangeStamp.init) })
        }
        segmentCache.remember(segments, of: documentRow)
        return segments
    }

    /// Decodes segment `id` of `document`, the changes it names outside itself found by `outside` or else by the
    /// stamps it carries.
    func decodeSegment(
        _ bytes: Data, id: Int64, of document: DocumentID, outside: (ChangeID) -> ChangeStamp?
    ) throws -> [Change] {
        do {
            return try ChangeRunCodec.decode(bytes, document: document, outside: outside)
        } catch {
            throw StoreError(
                .corrupt, "segment \(id & 0xFFFF_FFFF) of document \(document) does not decode: \(error)")
        }
    }

    /// Per device, the highest seq of `document`'s changes that segments hold (the rest are rows).
    func foldedSeqs(of documentRow: Int64, in db: Database) throws -> [Int64: UInt64] {
        var result: [Int64: UInt64] = [:]
        var rows = try RawRows(
            db.cachedStatement(sql: "SELECT device, folded FROM frontier WHERE document = ? AND folded > 0"),
            arguments: [documentRow])
        while let row = try rows.next() { result[row[0]] = try ColumnDecoder.unsigned(row[1], "folded seq") }
        return result
    }
}
