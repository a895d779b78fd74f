import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import FolioTestDoubles
import Foundation

/// `concurrent-trace [PATH]`: a concurrent editing trace (default friendsforever, `Benchmarks/traces/README.md`)
/// recorded as its agents' changes, one device per agent, each transaction an edit on its parents (on a `merge`
/// resolution without contents where it names several, and one more on the heads the trace ends with, if several).
/// Measured: opening the text document from the log alone (no checkpoint but the empty document's), each time in a
/// freshly opened library, so the whole graph is replayed character by character; then opening it from a checkpoint
/// of the final state. In the same run, loro replays the same transactions at their parents, one peer per agent,
/// and imports all the updates into a fresh document.
enum ConcurrentTraceBenchmark {
    static let rounds = 5

    static func run() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        let url =
            arguments.first.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Benchmarks/traces/friendsforever.json.gz").standardizedFileURL
        let trace = try ConcurrentEditingTrace.load(url)
        let scratch = try ScratchDirectory("concurrent-trace")
        defer { scratch.cleanUp() }
        let recorded = scratch.file("recorded")
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        func makeLibrary(at root: URL) throws -> DocumentLibrary {
            try DocumentLibrary(
                at: root, key: DeviceKey(using: SeededIdentifierSource(seed: 80)), deviceName: "bench", clock: clock,
                identifiers: SeededIdentifierSource(seed: 81), autosave: .manual,
                conflictPolicy: ConflictPolicy(default: .merge), backgroundWork: false)
        }

        // The history, as the agents' devices made it.
        let id: DocumentID
        let rootVector: VersionVector
        var mergedHeads = 0
        var changes = 0
        let recordMilliseconds: Double
        do {
            let library = try makeLibrary(at: recorded)
            let created = try await library.create(TextDocument.self, named: "trace")
            id = created.id
            guard let root = try library.store.heads(of: id).first else { throw BenchError("no root change") }
            rootVector = root.vector
            try await created.close()  // checkpoints the empty document
            // Concurrent inserts at one place fall in the order of their devices' ids: agent 0 gets the lowest, as
            // in the order the trace was recorded with.
            let authors = (0..<trace.agentCount).map { agent in
                DeviceKey(using: SeededIdentifierSource(seed: 90 + UInt64(agent))).device(named: "agent \(agent)")
            }.sorted { $0.id < $1.id }
            var heads: [ChangeHash] = []
            recordMilliseconds =
                try measure {
                    heads = try trace.record(in: library.store, document: id, root: root.hash, authors: authors)
                } * 1000
            if heads.count > 1 {
                // A device merges the branches the trace ends with, as opening the document would.
                try library.store.append(
                    [.resolution(Resolution(strategy: .merge, chosen: heads, discarded: []))], to: id,
                    on: .heads(heads), author: authors[0])
                mergedHeads = heads.count
            }
            changes = try library.store.changeCount()
            try Self.expectOnlyRootCheckpoint(in: library.store, of: id, root: rootVector)
            try library.store.close()
        }
        let storeBytes = directoryBytes(recorded.appendingPathComponent(".folio"))
        let composition = try RawSQLite(recorded.appendingPathComponent(".folio/store.sqlite"), synchronous: "NORMAL")
            .composition()

        // Opens from the log: each on a copy of the recorded library, so that the close, which checkpoints, leaves
        // the next round nothing to start from.
        var folioMilliseconds: [Double] = []
        var libraryMilliseconds: [Double] = []
        var textOK = true
        for round in 0..<rounds {
            let copy = scratch.file("round-\(round)")
            try FileManager.default.copyItem(at: recorded, to: copy)
            var library: DocumentLibrary?
            libraryMilliseconds.append(try measure { library = try makeLibrary(at: copy) } * 1000)
            try Self.expectOnlyRootCheckpoint(in: library!.store, of: id, root: rootVector)
            var document: Document<TextDocument>?
            folioMilliseconds.append(
                try await measureAsync { document = try await library!.open(id, as: TextDocument.self) } * 1000)
            let text = await document!.model.text
            textOK = textOK && text == trace.endContent
            try await document!.close()
            try library!.store.close()
            try FileManager.default.removeItem(at: copy)
        }

        // Opens from a checkpoint of the final state, which the first close takes.
        var checkpointMilliseconds: [Double] = []
        do {
            let library = try makeLibrary(at: recorded)
            let document = try await library.open(id, as: TextDocument.self)
            let head = await document.currentHead
            try await document.close()
            guard try library.store.checkpoints.latest(of: id)?.vector == head.vector else {
                throw BenchError("closing the document took no checkpoint of the final state")
            }
            try library.store.close()
        }
        for _ in 0..<rounds {
            let library = try makeLibrary(at: recorded)
            var document: Document<TextDocument>?
            checkpointMilliseconds.append(
                try await measureAsync { document = try await library.open(id, as: TextDocument.self) } * 1000)
            let text = await document!.model.text
            textOK = textOK && text == trace.endContent
            try await document!.close()
            try library.store.close()
        }

        let peers = try PythonPeers.run("concurrent_trace_peers.py", arguments: [url.path])
        let folio = median(folioMilliseconds)
        let folioCheckpoint = median(checkpointMilliseconds)
        let loro = peers["loro_ms"] as? Double ?? .nan
        let loroImport = peers["loro_import_ms"] as? Double ?? .nan
        let loroLoad = peers["loro_snapshot_load_ms"] as? Double ?? .nan
        let loroBytes = peers["loro_snapshot_bytes"] as? Int ?? 0
        let loroOK = peers["text_ok"] as? Bool ?? false
        let ratio = folio / loro
        let ratioImport = folio / loroImport
        let storeRatio = Double(storeBytes) / Double(loroBytes)
        let operations = trace.transactions.reduce(0) { $0 + $1.operations.count }
        printTable(
            "concurrent-trace: \(url.lastPathComponent), \(trace.transactions.count) transactions by \(trace.agentCount) agents, median of \(rounds) (\(machineDescription()))",
            [
                ("folio ms (open from the log, full replay)", format(folio, 1)),
                ("folio ms, open from a checkpoint of the final state", format(folioCheckpoint, 2)),
                ("folio library open ms (before each open from the log)", format(median(libraryMilliseconds), 2)),
                ("folio record ms (the history into the log, once)", format(recordMilliseconds, 0)),
                ("loro ms (replay at the parents, one peer per agent)", format(loro, 1)),
                ("loro import ms (all updates into a fresh document)", format(loroImport, 2)),
                ("loro snapshot load ms", format(loroLoad, 2)),
                ("ratio folio / loro", format(ratio, 3)),
                ("ratio folio / loro import", format(ratioImport, 3)),
                ("text matches endContent (folio / loro)", "\(textOK) / \(loroOK)"),
                ("operations in the trace", "\(operations)"),
                ("heads merged at the end", "\(mergedHeads)"),
                ("changes in the log", "\(changes)"),
                ("store bytes (.folio, no checkpoint of the final state)", "\(storeBytes)"),
            ] + composition + [
                ("  store bytes a change", format(Double(storeBytes) / Double(changes), 1)),
                ("loro snapshot bytes", "\(loroBytes)"),
                ("size ratio store / loro", format(storeRatio, 3)),
                ("folio rounds ms", folioMilliseconds.map { format($0, 1) }.joined(separator: " ")),
                ("folio checkpoint rounds ms", checkpointMilliseconds.map { format($0, 2) }.joined(separator: " ")),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "folio_ms": (folio * 10).rounded() / 10, "folio_checkpoint_ms": (folioCheckpoint * 100).rounded() / 100,
            "loro_ms": loro, "loro_import_ms": loroImport, "loro_snapshot_load_ms": loroLoad,
            "ratio": (ratio * 1000).rounded() / 1000, "ratio_import": (ratioImport * 1000).rounded() / 1000,
            "text_ok": textOK, "loro_text_ok": loroOK, "changes": changes, "store_bytes": storeBytes,
            "loro_snapshot_bytes": loroBytes, "store_ratio": (storeRatio * 1000).rounded() / 1000,
            "peak_memory_mib": Int(peakMemoryMiB()),
        ])
    }

    /// Throws when `store` holds a checkpoint of anything past the empty document (at `root`): the open would not
    /// replay the whole history.
    private static func expectOnlyRootCheckpoint(
        in store: ChangeLogStore, of id: DocumentID, root: VersionVector
    ) throws {
        guard let checkpoint = try store.checkpoints.latest(of: id), checkpoint.vector != root else { return }
        throw BenchError("a checkpoint of \(checkpoint.vector.changeCount) changes exists before the open")
    }
}
