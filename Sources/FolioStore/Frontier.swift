import FolioCore
import Foundation
import GRDB

/// A document's frontier: per device, its latest change and whether that change is a head.
///
/// It answers in O(devices) what appending and ingesting need: the document's vector (the highest seq per device,
/// contiguous because only ready changes enter the log), its heads (a head is always its device's latest change, so
/// heads have distinct devices) and the highest lamport timestamp (a head's). Loaded and saved inside the same
/// transaction as the changes it describes.
struct Frontier: Sendable {
    struct Tip: Sendable, Equatable {
        var deviceRow: Int64
        var seq: UInt64
        var lamport: UInt64
        var hash: ChangeHash
        var isHead: Bool
        var isDirty = false
        /// The change itself, when it is small (large ones are among the store's recent values) and this process
        /// recorded it or read it since, so that reading a head costs no query; never stored.
        var change: Change?

        /// Equal when the stored columns are.
        static func == (lhs: Tip, rhs: Tip) -> Bool {
            (lhs.deviceRow, lhs.seq, lhs.lamport, lhs.hash, lhs.isHead) == (
                rhs.deviceRow, rhs.seq, rhs.lamport, rhs.hash, rhs.isHead
            )
        }
    }

    let documentRow: Int64
    private(set) var tips: [DeviceID: Tip] = [:]
    /// The device of each tip, by the tip's hash (a change may name a thousand parents).
    private var tipsByHash: [ChangeHash: DeviceID] = [:]
    private(set) var vector = VersionVector()
    /// The lifecycle changes recorded since the last ``takeLifecycleAdded()``.
    private var lifecycleAdded: [Change] = []

    /// Loads the frontier of `documentRow`.
    init(documentRow: Int64, in db: Database) throws {
        self.documentRow = documentRow
        var rows = try RawRows(
            db.cachedStatement(
                sql: """
                    SELECT f.device, d.uuid, f.seq, f.lamport, f.hash, f.is_head
                    FROM frontier f JOIN device d ON d.id = f.device WHERE f.document = ?
                    """),
            arguments: [documentRow])
        while let row = try rows.next() { try include(row) }
    }

    /// The frontier of a document with no change.
    init(empty documentRow: Int64) {
        self.documentRow = documentRow
    }

    /// Every document's frontier, read with one query, by document row, with the document's identity.
    static func all(in db: Database) throws -> [Int64: (document: DocumentID, frontier: Frontier)] {
        var result: [Int64: (document: DocumentID, frontier: Frontier)] = [:]
        var rows = try RawRows(
            db.cachedStatement(
                sql: """
                    SELECT f.device, d.uuid, f.seq, f.lamport, f.hash, f.is_head, f.document, doc.uuid
                    FROM frontier f JOIN device d ON d.id = f.device JOIN document doc ON doc.id = f.document
                    """), arguments: [])
        while let row = try rows.next() {
            let documentRow: Int64 = row[6]
            if result[documentRow] == nil {
                result[documentRow] = (DocumentID(try ColumnDecoder.uuid(row[7])), Frontier(empty: documentRow))
            }
            try result[documentRow]!.frontier.include(row)
        }
        return result
    }

    /// Adds the tip in `row`: device row, device uuid, seq, lamport, hash, is_head.
    private mutating func include(_ row: RawRow) throws {
        let device = DeviceID(try ColumnDecoder.uuid(row[1]))
        let seq = try ColumnDecoder.seq(row[2], "frontier sequence number")
        if let old = tips[device] { tipsByHash[old.hash] = nil }
        tips[device] = Tip(
            deviceRow: row[0], seq: seq, lamport: try ColumnDecoder.unsigned(row[3], "frontier lamport"),
            hash: try ColumnDecoder.changeHash(row[4]),
            isHead: row[5] as Bool)
        vector[device] = seq
        tipsByHash[tips[device]!.hash] = device
    }

    /// The heads' hashes, ascending (the order parents are recorded in).
    var headHashes: [ChangeHash] {
        tips.values.filter(\.isHead).map(\.hash).sorted()
    }

    /// The heads as (device, seq), in causal order.
    var heads: [(device: DeviceID, seq: UInt64, lamport: UInt64)] {
        tips.filter { $0.value.isHead }
            .map { (device: $0.key, seq: $0.value.seq, lamport: $0.value.lamport) }
            .sorted { ($0.lamport, $0.device) < ($1.lamport, $1.device) }
    }

    /// The heads' hashes in causal order (what a sync session announces).
    var headsInOrder: [ChangeHash] {
        heads.map { tips[$0.device]!.hash }
    }

    /// The highest lamport timestamp in the document (0 when it has no change).
    var maxLamport: UInt64 {
        tips.values.reduce(0) { max($0, $1.lamport) }
    }

    /// Records that `change` (`size` bytes encoded), whose dependencies are all in the log, has just been appended.
    ///
    /// - Complexity: O(devices).
    mutating func record(_ change: Change, size: Int, deviceRow: Int64) {
        for (device, tip) in tips where tip.isHead && device != change.id.device && change.vector[device] >= tip.seq {
            tips[device]!.isHead = false
            tips[device]!.isDirty = true
        }
        if let old = tips[change.id.device] { tipsByHash[old.hash] = nil }
        tips[change.id.device] = Tip(
            deviceRow: deviceRow, seq: change.id.seq, lamport: change.lamport, hash: change.hash, isHead: true,
            isDirty: true,
            change: size < ChangeLogStore.cachedChangeThreshold ? change : nil)
        tipsByHash[change.hash] = change.id.device
        vector[change.id.device] = change.id.seq
        if case .lifecycle = change.kind { lifecycleAdded.append(change) }
    }

    /// The lifecycle changes recorded since the last call.
    mutating func takeLifecycleAdded() -> [Change] {
        defer { lifecycleAdded = [] }
        return lifecycleAdded
    }

    /// The change with this hash when it is a tip kept decoded (see ``Tip/change``).
    ///
    /// - Complexity: O(1).
    func keptChange(_ hash: ChangeHash) -> Change? {
        tipsByHash[hash].flatMap { tips[$0]?.change }
    }

    /// Keeps `change`, the tip of its device, decoded with the tip.
    mutating func keep(_ change: Change) {
        tips[change.id.device]?.change = change
    }

    /// Writes the tips that changed.
    mutating func save(in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO frontier (document, device, seq, lamport, hash, is_head) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (document, device) DO UPDATE SET
                    seq = excluded.seq, lamport = excluded.lamport, hash = excluded.hash, is_head = excluded.is_head
                """)
        for device in tips.keys.sorted() where tips[device]!.isDirty {
            let tip = tips[device]!
            try statement.execute(arguments: [
                documentRow, tip.deviceRow, Int64(tip.seq), Int64(tip.lamport), tip.hash.data, tip.isHead,
            ])
            tips[device]!.isDirty = false
        }
    }
}
