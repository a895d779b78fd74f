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
    private(set) var changes: [Change] = []
    /// The changes' indexes by hash, built when a change is first looked up by hash: reading a document's history
    /// looks its changes up by identity, and only a lookup by hash (a parent the reader did not read, say) needs
    /// them all hashed.
    private var byHash = HashIndex()
    /// Per device, its changes by seq.
    var byDevice: [DeviceID: DeviceChanges] = [:]
    /// The changes whose seq is not above the latest of their device in earlier segments (segments that folded one
    /// device's changes out of order), by identity: they replace the earlier ones.
    var unordered: [ChangeID: Int] = [:]

    /// One device's changes: their seqs, ascending, and their indexes in `changes`.
    struct DeviceChanges: Sendable {
        var seqs: [UInt64] = []
        var indexes: [Int] = []

        /// The index of the change with this seq, if any.
        ///
        /// - Complexity: O(1) when the device's seqs are consecutive (as folds leave them), else O(log n).
        func index(of seq: UInt64) -> Int? {
            guard let first = seqs.first, seq >= first else { return nil }
            if seq - first < UInt64(seqs.count), seqs[Int(seq - first)] == seq { return indexes[Int(seq - first)] }
            var low = 0
            var high = seqs.count
            while low < high {
                let middle = (low + high) / 2
                if seqs[middle] < seq { low = middle + 1 } else { high = middle }
            }
            return low < seqs.count && seqs[low] == seq ? indexes[low] : nil
        }
    }

    static let empty = DecodedSegments()

    func change(_ id: ChangeID) -> Change? {
        if !unordered.isEmpty, let index = unordered[id] { return changes[index] }
        return byDevice[id.device]?.index(of: id.seq).map { changes[$0] }
    }

    func change(_ hash: ChangeHash) -> Change? { byHash.index(of: hash, in: changes).map { changes[$0] } }

    /// Whether the decoded segments hold the changes of `device` at both ends of `seqs` (the seqs between follow, as
    /// folds leave them; a reader that misses one reads every segment).
    func holds(_ device: DeviceID, ends seqs: ClosedRange<UInt64>) -> Bool {
        // A later segment may replace changes folded out of order: while there are any, every segment is read.
        guard unordered.isEmpty, let entry = byDevice[device] else { return false }
        return entry.index(of: seqs.lowerBound) != nil && entry.index(of: seqs.upperBound) != nil
    }

    /// The indexes of a list of changes by hash, built on the first lookup. Shared by the copies of the segments
    /// that hold the same changes (adding changes gives the segments a new one).
    final class HashIndex: Sendable {
        private let table = Mutex<ChangeHashTable?>(nil)

        /// The index of the change with this hash in `changes` (the same changes on every call).
        func index(of hash: ChangeHash, in changes: [Change]) -> Int? {
            table.withLock { table in
                if table == nil { table = ChangeHashTable(changes) }
                return table!.index(of: hash, in: changes)
            }
        }
    }

    /// Appends the changes of `device` with the seqs `seqs` to `result`, in order. Returns the first seq the
    /// segments lack (then `result` holds the changes before it), or `nil`.
    func append(_ device: DeviceID, seqs: ClosedRange<UInt64>, to result: inout [Change]) -> UInt64? {
        let entry = byDevice[device] ?? DeviceChanges()
        // The range comes from the store's marks: a damaged one must read as a missing change, not a huge reservation.
        result.reserveCapacity(result.count + min(seqs.count, changes.count))
        for seq in seqs {
            if !unordered.isEmpty, let index = unordered[ChangeID(device: device, seq: seq)] {
                result.append(changes[index])
            } else if let index = entry.index(of: seq) {
                result.append(changes[index])
            } else {
                return seq
            }
        }
        return nil
    }

    /// Adds the changes of segment `id`, decoded.
    mutating func append(segment id: Int64, changes decoded: [Change]) {
        ids.append(id)
        counts.append(decoded.count)
        byHash = HashIndex()
        changes.reserveCapacity(changes.count + decoded.count)
        // The devices of the segment, taken out of `byDevice` while their entries grow; found by a scan while they
        // are few.
        var devices: [DeviceID] = []
        var entries: [DeviceChanges] = []
        var slots: [DeviceID: Int] = [:]
        for change in decoded {
            let device = change.id.device
            var slot = devices.count <= 8 ? devices.firstIndex(of: device) : slots[device]
            if slot == nil {
                slot = devices.count
                slots[device] = devices.count
                devices.append(device)
                entries.append(byDevice.removeValue(forKey: device) ?? DeviceChanges())
            }
            if let last = entries[slot!].seqs.last, change.id.seq <= last {
                unordered[change.id] = changes.count
            } else {
                entries[slot!].seqs.append(change.id.seq)
                entries[slot!].indexes.append(changes.count)
            }
            changes.append(change)
        }
        for (device, entry) in zip(devices, entries) { byDevice[device] = entry }
    }
}

/// The decoded segments of the documents read most recently, so that reading old changes decodes their segments
/// once. Segments never change once written (a fold may replace a document's last one with a larger one, which has
/// another row): an entry is reused when the file still lists the same segments.
final class SegmentCache: Sendable {
    /// How many documents' segments are kept decoded.
    static let documentLimit = 8

    /// How many segments the store has decoded (see `ChangeLogStore.segmentsDecoded`).
    let decodes = Atomic<Int>(0)

    /// How many segments decoded alone are kept (``single(_:)``).
    static let singleLimit = 16

    private struct State {
        var documents: [Int64: DecodedSegments] = [:]
        /// Document rows, least recently used first.
        var order: [Int64] = []
        /// Segments decoded alone, each as decoded segments of its own, by segment id.
        var singles: [Int64: DecodedSegments] = [:]
        /// Their ids, least recently used first.
        var singleOrder: [Int64] = []
    }
    private let state = Mutex(State())

    /// Segment `id` decoded alone, if kept.
    func single(_ id: Int64) -> DecodedSegments? {
        state.withLock { state in
            guard let kept = state.singles[id] else { return nil }
            state.singleOrder.removeAll { $0 == id }
            state.singleOrder.append(id)
            return kept
        }
    }

    /// Keeps `segment`, one segment decoded alone.
    func remember(single segment: DecodedSegments) {
        guard segment.ids.count == 1 else { return }
        let id = segment.ids[0]
        state.withLock { state in
            state.singles[id] = segment
            state.singleOrder.removeAll { $0 == id }
            state.singleOrder.append(id)
            while state.singleOrder.count > Self.singleLimit {
                state.singles[state.singleOrder.removeFirst()] = nil
            }
        }
    }

    func cached(_ documentRow: Int64) -> DecodedSegments? {
        state.withLock { $0.documents[documentRow] }
    }

    /// Takes the entry of `documentRow` out of the cache when `fits` it, so that its holder extends it without
    /// copying it; an entry that does not fit stays.
    func take(_ documentRow: Int64, where fits: (DecodedSegments) -> Bool) -> DecodedSegments? {
        state.withLock { state in
            guard let entry = state.documents[documentRow], fits(entry) else { return nil }
            state.order.removeAll { $0 == documentRow }
            return state.documents.removeValue(forKey: documentRow)
        }
    }

    /// Keeps `segments` for `documentRow`, unless the entry there already holds them and more (another reader
    /// decoded further meanwhile).
    func remember(_ segments: DecodedSegments, of documentRow: Int64) {
        state.withLock { state in
            if let kept = state.documents[documentRow], kept.ids.count > segments.ids.count,
                Array(kept.ids.prefix(segments.ids.count)) == segments.ids
            {
                return
            }
            state.documents[documentRow] = segments
            state.order.removeAll { $0 == documentRow }
            state.order.append(documentRow)
            while state.order.count > Self.documentLimit {
                state.documents[state.order.removeFirst()] = nil
            }
        }
    }

    func forget(_ documentRow: Int64) {
        let range = ChangeLogStore.segmentRange(of: documentRow)
        state.withLock { state in
            state.documents[documentRow] = nil
            state.order.removeAll { $0 == documentRow }
            state.singleOrder.removeAll { range.contains($0) }
            state.singles = state.singles.filter { !range.contains($0.key) }
        }
    }
}

extension ChangeLogStore {
    /// How many segments this store has decoded since it opened (folds, reads and streams; `verify` not counted):
    /// what a read of old changes cost, for diagnostics and tests.
    package var segmentsDecoded: Int { segmentCache.decodes.load(ordering: .relaxed) }

    /// A segment's row id: the document's row in the high 32 bits and the segment's number in the low ones, so that
    /// a document's segments are one range of the table's own key, in order, without an index of their own.
    static func segmentRange(of documentRow: Int64) -> ClosedRange<Int64> {
        (documentRow << 32)...(documentRow << 32 | 0xFFFF_FFFF)
    }

    /// The segments of `document` (row `documentRow`) as `db` holds them, decoded; from the cache when it holds
    /// the same ones.
    ///
    /// - Throws: `StoreError` (`corrupt`) when a segment does not decode or names a change no earlier segment holds.
    func segments(
        of document: DocumentID, documentRow: Int64, in db: Database,
        until enough: ((DecodedSegments) -> Bool)? = nil
    ) throws -> DecodedSegments {
        let range = Self.segmentRange(of: documentRow)
        let ids = try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT id FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound])
        guard !ids.isEmpty else { return .empty }
        func isPrefix(_ cached: DecodedSegments) -> Bool {
            cached.ids.count <= ids.count && Array(ids.prefix(cached.ids.count)) == cached.ids
        }
        if let cached = segmentCache.cached(documentRow), isPrefix(cached),
            cached.ids.count == ids.count || enough?(cached) == true
        {
            return cached
        }
        // Extended where the cache left off, taken out of it meanwhile: a copy the cache kept would make every
        // segment appended copy all the changes decoded before it.
        var segments = segmentCache.take(documentRow, where: isPrefix) ?? DecodedSegments()
        // What was decoded goes back to the cache even when a later segment fails to decode.
        defer { if !segments.ids.isEmpty { segmentCache.remember(segments, of: documentRow) } }
        // Segments are decoded in order (each names changes of earlier ones by identity), and only as far as a
        // reader needs: reading an old version of a long history decodes the segments up to it.
        for id in ids.dropFirst(segments.ids.count) {
            if let enough, !segments.ids.isEmpty, enough(segments) { break }
            guard
                let bytes = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT bytes FROM segment WHERE id = ?"), arguments: [id])
            else { throw StoreError(.corrupt, "segment \(id) of document \(document) vanished while it was read") }
            let decoded = try decodeSegment(bytes, id: id, of: document) { segments.change($0).map(ChangeStamp.init) }
            segments.append(segment: id, changes: decoded)
        }
        return segments
    }

    /// How many segments a read by seqs (``appendFolded(_:of:documentRow:in:to:)``) decodes alone at most; a read
    /// that needs more reads the segments in order, through the document's cache, which keeps them for the next.
    static var segmentsReadAlone: Int { SegmentCache.singleLimit / 2 }

    /// Appends to `result` the changes `wanted` names (per device, seqs that are all folded), read from the segments
    /// that hold them, found by their seqs (`SegmentSeqs`) and each decoded once, alone, or from the segments the
    /// cache holds decoded: reading an old version of a long history decodes the segments it needs, not every
    /// segment before them. Returns `false`, with `result` as it was, when the read needs more than
    /// ``segmentsReadAlone`` segments, or when the segments' seqs cannot say where the changes are (a segment
    /// without seqs, or with seqs that do not decode, a device folded out of order, seqs that leave a hole, a segment
    /// that lacks a change its seqs promise or does not decode alone): the caller then reads the segments in order,
    /// which finds the changes or says what is wrong.
    func appendFolded(
        _ wanted: [(device: DeviceID, seqs: ClosedRange<UInt64>)], of document: DocumentID, documentRow: Int64,
        in db: Database, to result: inout [Change]
    ) throws -> Bool {
        guard !wanted.isEmpty else { return true }
        let start = result.count
        if let cached = segmentCache.cached(documentRow), wanted.allSatisfy({ cached.holds($0.device, ends: $0.seqs) })
        {
            if wanted.allSatisfy({ cached.append($0.device, seqs: $0.seqs, to: &result) == nil }) { return true }
            result.removeSubrange(start...)
        }
        // Per segment, in order, what it holds of each device's wanted seqs.
        var plan: [(id: Int64, parts: [(device: DeviceID, seqs: ClosedRange<UInt64>)])] = []
        var previous = [UInt64](repeating: 0, count: wanted.count)
        var next = wanted.map(\.seqs.lowerBound)
        let range = Self.segmentRange(of: documentRow)
        var rows = try RawRows(
            db.cachedStatement(sql: "SELECT id, seqs FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound])
        while let row = try rows.next() {
            guard let stored = row[1] as Data?, let segmentSeqs = try? SegmentSeqs(decoding: stored) else {
                return false
            }
            var parts: [(device: DeviceID, seqs: ClosedRange<UInt64>)] = []
            for (index, entry) in wanted.enumerated() {
                guard let held = segmentSeqs.seqs(of: entry.device) else { continue }
                // Each segment holds later changes of a device than the ones before it, as folds write them; and
                // together they hold every seq wanted, each once.
                guard held.lowerBound > previous[index] else { return false }
                previous[index] = held.upperBound
                guard held.overlaps(entry.seqs) else { continue }
                let part = held.clamped(to: entry.seqs)
                guard part.lowerBound == next[index] else { return false }
                next[index] = part.upperBound &+ 1
                parts.append((entry.device, part))
            }
            if !parts.isEmpty {
                plan.append((row[0], parts))
                guard plan.count <= Self.segmentsReadAlone else { return false }
            }
        }
        guard zip(next, wanted).allSatisfy({ $0 == $1.seqs.upperBound &+ 1 }) else { return false }
        for (id, parts) in plan {
            let segment: DecodedSegments
            if let kept = segmentCache.single(id) {
                segment = kept
            } else {
                guard
                    let bytes = try Data.fetchOne(
                        db.cachedStatement(sql: "SELECT bytes FROM segment WHERE id = ?"), arguments: [id]),
                    let decoded = try? decodeSegment(bytes, id: id, of: document, outside: { _ in nil })
                else {
                    result.removeSubrange(start...)
                    return false
                }
                var single = DecodedSegments()
                single.append(segment: id, changes: decoded)
                segmentCache.remember(single: single)
                segment = single
            }
            for part in parts where segment.append(part.device, seqs: part.seqs, to: &result) != nil {
                result.removeSubrange(start...)
                return false
            }
        }
        return true
    }

    /// Decodes segment `id` of `document`, the changes it names outside itself found by `outside` or else by the
    /// stamps it carries.
    func decodeSegment(
        _ bytes: Data, id: Int64, of document: DocumentID, outside: (ChangeID) -> ChangeStamp?
    ) throws -> [Change] {
        segmentCache.decodes.add(1, ordering: .relaxed)
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
