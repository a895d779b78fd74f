import FolioChildProcess
import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// `trace`: the automerge-paper editing trace applied to a `TextDocument` through the Document API, one edit call
/// per patch, default durability and policy; in the same run, loro (committing after each patch, and once) and
/// pycrdt replay it from a Python virtual environment.
enum TraceBenchmark {
    static let rounds = 5

    static func run() async throws {
        let trace = try EditingTrace(named: "automerge-paper")
        var folioMilliseconds: [Double] = []
        var closeMilliseconds: [Double] = []
        var storeBytes = 0
        var fileBytes = 0
        var textOK = true
        var changes = 0
        var composition: [(String, String)] = []
        for _ in 0..<rounds {
            let scratch = try ScratchDirectory("trace")
            defer { scratch.cleanUp() }
            let library = try DocumentLibrary(
                at: scratch.url, key: DeviceKey(using: RandomIdentifierSource()), deviceName: "bench")
            let document = try await library.create(TextDocument.self, named: "paper")
            let patches = trace.patches
            folioMilliseconds.append(
                try await measureAsync {
                    try await document.perform { document in
                        for patch in patches {
                            if patch.deleted > 0 {
                                try document.edit(.delete(at: patch.position, count: patch.deleted))
                            }
                            if !patch.inserted.isEmpty {
                                try document.edit(.insert(at: patch.position, text: patch.inserted))
                            }
                        }
                        try document.commit()
                    }
                } * 1000)
            let finalText = await document.model.text
            textOK = textOK && finalText == trace.endContent
            closeMilliseconds.append(try await measureAsync { try await document.close() } * 1000)
            changes = try library.store.changeCount()
            try library.store.close()
            storeBytes = directoryBytes(scratch.url.appendingPathComponent(".folio"))
            let raw = try RawSQLite(scratch.url.appendingPathComponent(".folio/store.sqlite"), synchronous: "NORMAL")
            composition = try raw.composition()
            fileBytes = directoryBytes(scratch.url.appendingPathComponent("Documents"))
        }
        // Once more with every edit awaited from a task on the cooperative pool, each call moving to the document's
        // queue and back: what a program pays that does not group its calls with `perform`.
        let awaitedMilliseconds: Double
        do {
            let scratch = try ScratchDirectory("trace-awaited")
            defer { scratch.cleanUp() }
            let library = try DocumentLibrary(
                at: scratch.url, key: DeviceKey(using: RandomIdentifierSource()), deviceName: "bench")
            let document = try await library.create(TextDocument.self, named: "paper")
            awaitedMilliseconds =
                try await measureAsync {
                    for patch in trace.patches {
                        if patch.deleted > 0 {
                            try await document.edit(.delete(at: patch.position, count: patch.deleted))
                        }
                        if !patch.inserted.isEmpty {
                            try await document.edit(.insert(at: patch.position, text: patch.inserted))
                        }
                    }
                    try await document.commit()
                } * 1000
            let finalText = await document.model.text
            textOK = textOK && finalText == trace.endContent
            try await document.close()
        }
        let peers = try PythonPeers.run("trace_peers.py", arguments: ["automerge-paper"])
        let folio = median(folioMilliseconds)
        let loroPerPatch = peers["loro_per_patch_ms"] as? Double ?? .nan
        let loroSingle = peers["loro_single_commit_ms"] as? Double ?? .nan
        let pycrdt = peers["pycrdt_ms"] as? Double ?? .nan
        let loroBytes = peers["loro_snapshot_bytes"] as? Int ?? 0
        printTable(
            "trace: automerge-paper, \(trace.patches.count) patches through Document.edit, median of \(rounds) (\(machineDescription()))",
            [
                ("folio ms (edits + commit, in one perform)", format(folio, 1)),
                ("folio ms, each edit awaited from the pool (once)", format(awaitedMilliseconds, 1)),
                ("folio close ms (save + checkpoint)", format(median(closeMilliseconds), 1)),
                ("loro ms, commit per patch", format(loroPerPatch, 1)),
                ("loro ms, one commit", format(loroSingle, 1)),
                ("pycrdt ms", format(pycrdt, 1)),
                ("ratio folio / loro per patch", format(folio / loroPerPatch, 3)),
                ("ratio folio / loro one commit", format(folio / loroSingle, 3)),
                ("text matches endContent", "\(textOK)"),
                ("changes in the log", "\(changes)"),
                ("store bytes (.folio: log + checkpoint)", "\(storeBytes)"),
                ("document file bytes", "\(fileBytes)"),
                ("loro snapshot bytes", "\(loroBytes)"),
            ] + composition + [
                ("size ratio store / loro", format(Double(storeBytes) / Double(loroBytes), 3)),
                ("folio rounds ms", folioMilliseconds.map { format($0, 1) }.joined(separator: " ")),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "folio_ms": (folio * 10).rounded() / 10, "folio_awaited_ms": (awaitedMilliseconds * 10).rounded() / 10,
            "loro_per_patch_ms": loroPerPatch, "loro_single_commit_ms": loroSingle,
            "pycrdt_ms": pycrdt, "ratio": (folio / loroPerPatch * 1000).rounded() / 1000, "text_ok": textOK,
            "store_bytes": storeBytes, "loro_snapshot_bytes": loroBytes,
            "size_ratio": (Double(storeBytes) / Double(loroBytes) * 1000).rounded() / 1000,
            "peak_memory_mib": Int(peakMemoryMiB()),
        ])
    }
}

/// Wall-clock seconds of an async `body`.
func measureAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The total size of the regular files below `url`.
func directoryBytes(_ url: URL) -> Int {
    guard
        let enumerator = FileManager.default.enumerator(
            at: url, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
    else { return 0 }
    var total = 0
    for case let file as URL in enumerator {
        let values = try? file.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
        if values?.isRegularFile == true { total += values?.fileSize ?? 0 }
    }
    return total
}

/// Runs a peer script from Tools/bench/peers/ with the virtual environment Tools/bench/run prepared, and returns
/// the JSON object it prints last.
enum PythonPeers {
    static func run(_ script: String, arguments: [String]) throws -> [String: Any] {
        let benchDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let python =
            ProcessInfo.processInfo.environment["FOLIO_BENCH_PYTHON"]
            ?? benchDirectory.deletingLastPathComponent().deletingLastPathComponent().path + "/.venv-bench/bin/python"
        // Through env, so that the virtual environment's python is run by its own path (a resolved link would
        // start the base interpreter without the environment's packages).
        let run = try ChildProcess.run(
            "/usr/bin/env",
            arguments: [python, benchDirectory.appendingPathComponent("peers/\(script)").path] + arguments,
            standardInput: .inherit, standardError: .inherit)
        guard run.termination.succeeded,
            let last = run.outputText.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        else { throw BenchError("the peer script \(script) failed (\(run.termination))") }
        return object
    }
}
