import FolioCore
import FolioStore
import Foundation

/// `ingest`: one million remote changes from 8 devices, arriving interleaved as encoded bytes in batches of 1,000
/// with each batch's signed heads (decoded, checked, signatures verified and stored by Folio), against the same rows
/// inserted with plain SQLite, side by side in one run.
enum IngestBenchmark {
    static let changeCount = benchScale(1_000_000)
    static let batch = 1_000
    static let rounds = 3

    static func run() throws {
        let workload = MultiDeviceWorkload(changeCount: changeCount, deviceCount: 8, seed: 11)
        let wire = workload.changes.map { $0.encoded() }
        let local = DeviceKey(using: SeededIdentifierSource(seed: 12))
        // Signed by the senders before the clock starts: the receiver's cost is checking them.
        let heads = stride(from: 0, to: wire.count, by: batch).map { start in
            workload.heads(for: workload.changes[start..<min(start + batch, wire.count)])
        }
        var folioSeconds: [Double] = []
        var sqliteSeconds: [Double] = []
        for _ in 0..<rounds {
            let scratch = try ScratchDirectory("ingest")
            defer { scratch.cleanUp() }
            let store = try ChangeLogStore(at: scratch.file("folio.sqlite"), key: local, deviceName: "receiver")
            folioSeconds.append(
                try measure {
                    for start in stride(from: 0, to: wire.count, by: batch) {
                        let changes = try wire[start..<min(start + batch, wire.count)].map {
                            try EncodedChange(decoding: $0, document: workload.document)
                        }
                        let result = try store.ingest(encoded: changes, heads: heads[start / batch])
                        precondition(result.applied.count == changes.count, "every change arrives in causal order")
                    }
                })
            try store.close()
            let rows = try RawSQLite(scratch.file("folio.sqlite"), synchronous: "NORMAL").changeRows()
            precondition(rows.count == changeCount)
            // Same rows, in arrival order.
            let order = Dictionary(
                uniqueKeysWithValues: workload.changes.enumerated().map { ($0.element.hash, $0.offset) })
            let arrival = rows.sorted { order[ChangeHash(bytes: $0.hash)]! < order[ChangeHash(bytes: $1.hash)]! }
            let baseline = try AppendBenchmark.makeBaseline(scratch.file("sqlite.sqlite"))
            sqliteSeconds.append(try measure { try baseline.insert(arrival, batch: batch) })
        }
        let bodyBytes = Double(wire.reduce(0) { $0 + $1.count }) / Double(wire.count)
        AppendBenchmark.report(
            name: "ingest", folioSeconds: folioSeconds, sqliteSeconds: sqliteSeconds,
            extra: [
                ("devices", "8"),
                ("mean encoded change bytes", format(bodyBytes, 1)),
            ])
    }
}
