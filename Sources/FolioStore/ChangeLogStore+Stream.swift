import FolioCore
import Foundation
import GRDB
import HeapModule

extension ChangeLogStore {
    /// How many rows ``streamChanges(of:since:within:batch:_:)`` hands over at most at a time, by default.
    public static var streamBatch: Int { 4_096 }

    /// How many changes a document's segments may hold for ``streamChanges(of:since:within:batch:_:)`` to read them
    /// through the segment cache, as every other read does; the segments of a longer history are decoded one at a
    /// time and none is kept.
    package static var streamedSegmentsCached: Int { 65_536 }

    /// Hands the changes of `document` that `vector` lacks and `limit` includes (all that `vector` lacks when `limit`
    /// is `nil`) to `body`, a batch at a time, in causal order (each change after every change it names), until
    /// `body` returns `false`: what a replay of a long history reads without holding all of it at once.
    ///
    /// The changes folded into segments come first, segment after segment, each segment's in the order it holds them
    /// (segments are written in causal order); then the rows, by lamport timestamp, then identity. A batch is what one
    /// segment holds of those changes, or at most `batch` rows. The segments of a document whose segments hold more
    /// than 65,536 changes are decoded one at a time, each alone (a segment carries the stamps of the changes before
    /// it that it names), and the segment cache keeps none of them unless it held them already; shorter histories are
    /// read through the cache. ``changes(of:since:within:)`` reads the same changes, sorted by lamport timestamp, then
    /// identity, all at once.
    ///
    /// - Parameters:
    ///   - document: the document.
    ///   - vector: what the reader has: changes it includes are not handed over.
    ///   - limit: what the reader wants: only changes it includes are handed over (`nil`: all).
    ///   - batch: the most rows handed over at once (at least 1).
    ///   - body: takes a batch; returns whether to go on.
    /// - Returns: `true` when `body` was handed every change, `false` when it stopped the read.
    /// - Complexity: O(devices + those changes × log n) time, memory for one segment or `batch` rows at a time (and
    ///   a few rows per device).
    /// - Throws: ``StoreError``; `corrupt` when a segment does not decode, or when the segments do not hold a device's
    ///   changes in order, each once (a layout ``changes(of:since:within:)`` reads).
    @discardableResult
    public func streamChanges(
        of document: DocumentID, since vector: VersionVector, within limit: VersionVector?,
        batch: Int = streamBatch, _ body: ([Change]) -> Bool
    ) throws(StoreError) -> Bool {
        try streamChanges(
            of: document, since: vector, within: limit, batch: batch, cachingSegmentsUpTo: Self.streamedSegmentsCached,
            body)
    }

    /// Lets go of the decoded segments of `document` the segment cache holds (tests compare reads through the cache
    /// with reads that decode each segment alone).
    func forgetDecodedSegments(of document: DocumentID) throws(StoreError) {
        let row = try read("looking up document \(document)") { db in try rowID(of: document, in: db) }
        if let row { segmentCache.forget(row) }
    }

    /// ``streamChanges(of:since:within:batch:_:)``, reading the segments through the segment cache when they hold at
    /// most `cached` changes (or the cache holds them all already).
    @discardableResult
    package func streamChanges(
        of document: DocumentID, since vector: VersionVector, within limit: VersionVector?, batch: Int,
        cachingSegmentsUpTo cached: Int, _ body: ([Change]) -> Bool
    ) throws(StoreError) -> Bool {
        try read("streaming the changes of document \(document) since \(vector)") { db in
            guard let documentRow = try rowID(of: document, in: db) else { return true }
            let frontier = try self.frontier(of: documentRow, in: db)
            let wanted = limit.map { frontier.vector.intersecting($0) } ?? frontier.vector
            let missing = wanted.changesMissing(from: vector)
            let folded = missing.isEmpty ? [:] : try foldedSeqs(of: documentRow, in: db)
            var foldedRanges: [DeviceID: ClosedRange<UInt64>] = [:]
            var rows = StreamedRows(document: document, documentRow: documentRow)
            for (device, seqs) in missing {
                guard let deviceRow = frontier.tips[device]?.deviceRow else {
                    throw StoreError(.corrupt, "document \(document) has changes of device \(device) without its tip")
                }
                var first = seqs.lowerBound
                if let foldedSeq = folded[deviceRow], seqs.lowerBound <= foldedSeq {
                    foldedRanges[device] = seqs.lowerBound...min(foldedSeq, seqs.upperBound)
                    first = foldedSeq + 1
                }
                if first <= seqs.upperBound {
                    rows.add(device: device, deviceRow: deviceRow, seqs: first...seqs.upperBound)
                }
            }
            if !foldedRanges.isEmpty {
                var segments = StreamedSegments(ranges: foldedRanges, document: document)
                guard
                    try streamSegments(
                        of: document, documentRow: documentRow, into: &segments, cachingUpTo: cached, in: db, body)
                else { return false }
            }
            return try rows.stream(batch: max(batch, 1), store: self, in: db, body)
        }
    }

    /// Hands the changes of `document`'s segments that `segments` wants to `body`, segment after segment, until it
    /// has handed them all or `body` stops (then `false`).
    private func streamSegments(
        of document: DocumentID, documentRow: Int64, into segments: inout StreamedSegments, cachingUpTo cached: Int,
        in db: Database, _ body: ([Change]) -> Bool
    ) throws -> Bool {
        let range = Self.segmentRange(of: documentRow)
        let listed = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, count FROM segment WHERE id BETWEEN ? AND ? ORDER BY id"),
            arguments: [range.lowerBound, range.upperBound]
        ).map { (id: $0[0] as Int64, count: $0[1] as Int) }
        let ids = listed.map(\.id)
        let held = segmentCache.cached(documentRow).map { $0.ids == ids } ?? false
        // The stored counts are summed without overflowing, whatever a damaged file says.
        let total = listed.reduce(0) { sum, segment in
            let (added, overflow) = sum.addingReportingOverflow(max(segment.count, 0))
            return overflow ? .max : added
        }
        if held || total <= cached {
            // Read through the cache, as far as the segments holding the last changes wanted.
            let ranges = segments.ranges
            let decoded = try self.segments(of: document, documentRow: documentRow, in: db) { decoded in
                ranges.allSatisfy { decoded.holds($0.device, ends: $0.seqs) }
            }
            guard try segments.hand(decoded, from: 0, to: body) else { return false }
            guard segments.isComplete else {
                throw StoreError(.corrupt, "document \(document)'s segments lack changes they fold")
            }
            return true
        }
        for (index, id) in ids.enumerated() where !segments.isComplete {
            guard
                let bytes = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT bytes FROM segment WHERE id = ?"), arguments: [id])
            else { throw StoreError(.corrupt, "segment \(id) of document \(document) vanished while it was read") }
            let decoded: [Change]
            do {
                decoded = try decodeSegment(bytes, id: id, of: document) { _ in nil }
            } catch {
                // A segment that does not decode alone (it lacks a stamp of a change before it) decodes after the
                // segments before it, through the cache, which then holds them.
                let all = try self.segments(of: document, documentRow: documentRow, in: db)
                guard all.ids.prefix(index + 1) == ids.prefix(index + 1) else {
                    throw StoreError(.corrupt, "the segments of document \(document) changed while they were read")
                }
                guard try segments.hand(all, from: index, to: body) else { return false }
                break
            }
            guard try segments.hand(decoded[...], whole: decoded, to: body) else { return false }
        }
        guard segments.isComplete else {
            throw StoreError(.corrupt, "document \(document)'s segments lack changes they fold")
        }
        return true
    }
}

/// The changes a stream wants from a document's segments, and those it handed over.
private struct StreamedSegments {
    let document: DocumentID
    /// The devices whose changes are wanted; for each (in the same order), the seqs wanted and the next one to hand
    /// over (segments hold a device's changes in order).
    private let devices: [DeviceID]
    private let seqs: [ClosedRange<UInt64>]
    private var next: [UInt64]
    /// The index of each device in ``devices``, when they are too many to scan.
    private let slots: [DeviceID: Int]
    /// The index of the device of the last change wanted: a segment holds runs of one device's changes.
    private var lastSlot = 0
    /// How many changes are still to be handed over (at most `UInt64.max`, whatever the ranges).
    private var remaining: UInt64

    /// The changes of `ranges` (not empty), by device.
    init(ranges: [DeviceID: ClosedRange<UInt64>], document: DocumentID) {
        self.document = document
        let sorted = ranges.sorted { $0.key < $1.key }
        devices = sorted.map(\.key)
        seqs = sorted.map(\.value)
        next = seqs.map(\.lowerBound)
        slots = devices.count > 8 ? Dictionary(uniqueKeysWithValues: zip(devices, devices.indices)) : [:]
        remaining = seqs.reduce(0) { sum, range in
            let (count, overflow) = (range.upperBound - range.lowerBound).addingReportingOverflow(1)
            let (added, sumOverflow) = sum.addingReportingOverflow(count)
            return overflow || sumOverflow ? .max : added
        }
    }

    /// The seqs wanted, by device.
    var ranges: [(device: DeviceID, seqs: ClosedRange<UInt64>)] { Array(zip(devices, seqs)) }

    /// Whether every change wanted was handed over.
    var isComplete: Bool { remaining == 0 }

    /// Hands the wanted changes of the decoded segments from the one at `first` on to `body`, a segment at a time,
    /// until it has handed them all; `false` when `body` stops.
    mutating func hand(_ decoded: DecodedSegments, from first: Int, to body: ([Change]) -> Bool) throws -> Bool {
        var start = decoded.counts.prefix(first).reduce(0, +)
        for count in decoded.counts.dropFirst(first) where !isComplete {
            let end = min(start + count, decoded.changes.count)
            guard start < end else { break }
            guard try hand(decoded.changes[start..<end], to: body) else { return false }
            start = end
        }
        return true
    }

    /// Hands the wanted changes among `changes` (in the segments' order; `whole` when they are all of an array) to
    /// `body`; `false` when it stops.
    mutating func hand(_ changes: ArraySlice<Change>, whole: [Change]? = nil, to body: ([Change]) -> Bool) throws
        -> Bool
    {
        // `nil` while every change so far is wanted (the usual case), so that the array is handed over as it is.
        var wanted: [Change]?
        for index in changes.indices {
            let change = changes[index]
            if try isWanted(change) {
                wanted?.append(change)
            } else if wanted == nil {
                wanted = Array(changes[..<index])
            }
        }
        guard let wanted else { return body(whole ?? Array(changes)) }
        return wanted.isEmpty || body(wanted)
    }

    /// Whether `change` is wanted (then it counts as handed over).
    private mutating func isWanted(_ change: Change) throws -> Bool {
        guard remaining > 0 else { return false }
        let device = change.id.device
        let slot: Int
        if devices[lastSlot] == device {
            slot = lastSlot
        } else if let found = devices.count > 8 ? slots[device] : devices.firstIndex(of: device) {
            slot = found
        } else {
            return false
        }
        lastSlot = slot
        guard seqs[slot].contains(change.id.seq) else { return false }
        guard next[slot] == change.id.seq else {
            throw StoreError(
                .corrupt, "the segments of document \(document) do not hold change \(change.id) after the one before it"
            )
        }
        next[slot] += 1
        remaining -= 1
        return true
    }
}

/// The rows a stream reads: per device, its rows by seq, a few at a time, handed over merged by lamport timestamp,
/// then identity (a device's seqs follow its lamport timestamps).
private struct StreamedRows {
    let document: DocumentID
    let documentRow: Int64
    private var cursors: [Cursor] = []

    /// One device's rows still to read, and those read but not handed over.
    private struct Cursor {
        let device: DeviceID
        let deviceRow: Int64
        /// The next seq to read, and the last wanted.
        var next: UInt64
        let last: UInt64
        var buffer: [Change] = []
        var position = 0
    }

    /// The next change of a cursor, ordered as the stream hands them over.
    private struct Entry: Comparable {
        let lamport: UInt64
        let id: ChangeID
        let cursor: Int

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.lamport, lhs.id) < (rhs.lamport, rhs.id) }
        static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.lamport == rhs.lamport && lhs.id == rhs.id }
    }

    init(document: DocumentID, documentRow: Int64) {
        self.document = document
        self.documentRow = documentRow
    }

    mutating func add(device: DeviceID, deviceRow: Int64, seqs: ClosedRange<UInt64>) {
        cursors.append(Cursor(device: device, deviceRow: deviceRow, next: seqs.lowerBound, last: seqs.upperBound))
    }

    /// Reads the next rows of cursor `index` when it has handed over those it read; `false` when it has none left.
    private mutating func fill(_ index: Int, chunk: Int, store: ChangeLogStore, in db: Database) throws -> Bool {
        if cursors[index].position < cursors[index].buffer.count { return true }
        guard cursors[index].next <= cursors[index].last else { return false }
        cursors[index].buffer.removeAll(keepingCapacity: true)
        cursors[index].position = 0
        var rows = try RawRows(
            db.cachedStatement(
                sql: """
                    SELECT hash, length(body), body, seq FROM change
                    WHERE document = ? AND device = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?
                    """),
            arguments: [
                documentRow, cursors[index].deviceRow, Int64(cursors[index].next), Int64(cursors[index].last), chunk,
            ])
        while let row = try rows.next() {
            // Small bodies decode faster than a lookup; large ones may be kept decoded.
            let change =
                (row[1] as Int) < ChangeLogStore.cachedChangeThreshold
                ? try ColumnDecoder.change(row[2], document: document)
                : try store.decodedChange(try ColumnDecoder.changeHash(row[0]), document: document) { row[2] }
            // The next read starts after the row's key, and a body that names another change than its row is
            // damage, not a change to hand over again.
            guard change.id.seq == UInt64(clamping: row[3] as Int64), change.id.device == cursors[index].device else {
                throw StoreError(.corrupt, "a row of document \(document) holds change \(change.id), not its own")
            }
            cursors[index].buffer.append(change)
        }
        guard let read = cursors[index].buffer.last else {
            cursors[index].next = cursors[index].last + 1
            return false
        }
        cursors[index].next = read.id.seq + 1
        return true
    }

    /// Hands the rows to `body`, at most `batch` at a time; `false` when it stops.
    mutating func stream(batch: Int, store: ChangeLogStore, in db: Database, _ body: ([Change]) -> Bool) throws
        -> Bool
    {
        guard !cursors.isEmpty else { return true }
        let chunk = max(256, batch / cursors.count)
        var heap = Heap<Entry>()
        for index in cursors.indices where try fill(index, chunk: chunk, store: store, in: db) {
            let change = cursors[index].buffer[0]
            heap.insert(Entry(lamport: change.lamport, id: change.id, cursor: index))
        }
        var out: [Change] = []
        out.reserveCapacity(min(batch, 4_096))
        while let entry = heap.popMin() {
            let index = entry.cursor
            out.append(cursors[index].buffer[cursors[index].position])
            cursors[index].position += 1
            if try fill(index, chunk: chunk, store: store, in: db) {
                let change = cursors[index].buffer[cursors[index].position]
                heap.insert(Entry(lamport: change.lamport, id: change.id, cursor: index))
            }
            if out.count >= batch {
                guard body(out) else { return false }
                out.removeAll(keepingCapacity: true)
            }
        }
        return out.isEmpty || body(out)
    }
}
