import FolioCore
import FolioStore
import Foundation

/// `append`: one million local changes appended in batches, against the same rows inserted with plain SQLite
/// (same schema and indexes, same durability), side by side in one run.
enum AppendBenchmark {
    static let changeCount = benchScale(1_000_000)
    static let batch = 1_000
    static let rounds = 3

    static func run() throws {
        let document = DocumentID(using: SeededIdentifierSource(seed: 7))
        let key = DeviceKey(using: SeededIdentifierSource(seed: 8))
        let edit = ChangeKind.edit(Edit(operations: Data([0x01, 0x2a, 0x61])))  // about one typed character
        var folioSeconds: [Double] = []
        var sqliteSeconds: [Double] = []
        var bytesPerChange = 0.0
        for _ in 0..<rounds {
            let scratch = try ScratchDirectory("append")
            defer { scratch.cleanUp() }
            let store = try ChangeLogStore(at: scratch.file("folio.sqlite"), key: key, deviceName: "bench")
            let kinds = Array(repeating: edit, count: batch)
            folioSeconds.append(
                try measure {
                    for _ in 0..<(changeCount / batch) { try store.append(kinds, to: document) }
                })
            try store.close()
            bytesPerChange = Double(storeBytes(scratch.file("folio.sqlite"))) / Double(changeCount)
            let rows = try RawSQLite(scratch.file("folio.sqlite"), synchronous: "NORMAL").changeRows()
            precondition(rows.count == changeCount)
            let baseline = try makeBaseline(scratch.file("sqlite.sqlite"))
            sqliteSeconds.append(try measure { try baseline.insert(rows, batch: batch) })
        }
        report(
            name: "append", folioSeconds: folioSeconds, sqliteSeconds: sqliteSeconds,
            extra: [
                ("store bytes per change", format(bytesPerChange, 1))
            ])
    }

    /// An empty database with exactly the store's schema: made by the store itself, then used raw.
    static func makeBaseline(_ url: URL) throws -> RawSQLite {
        let schema = try ChangeLogStore(
            at: url, key: DeviceKey(using: SeededIdentifierSource(seed: 9)), deviceName: "baseline")
        try schema.close()
        return try RawSQLite(url, synchronous: "NORMAL")
    }

    static func report(name: String, folioSeconds: [Double], sqliteSeconds: [Double], extra: [(String, String)]) {
        let folio = Double(changeCount) / median(folioSeconds)
        let sqlite = Double(changeCount) / median(sqliteSeconds)
        printTable(
            "\(name): \(changeCount) changes in batches of \(batch), median of \(rounds) rounds (\(machineDescription()))",
            [
                ("folio changes/s", format(folio)),
                ("plain SQLite rows/s", format(sqlite)),
                ("ratio folio/sqlite", format(folio / sqlite, 3)),
                ("folio seconds per round", folioSeconds.map { format($0, 2) }.joined(separator: " ")),
                ("sqlite seconds per round", sqliteSeconds.map { format($0, 2) }.joined(separator: " ")),
                ("peak memory MiB", format(peakMemoryMiB())),
            ] + extra)
        printJSON([
            "folio_per_s": Int(folio), "sqlite_per_s": Int(sqlite), "ratio": (folio / sqlite * 1000).rounded() / 1000,
        ])
    }
}
