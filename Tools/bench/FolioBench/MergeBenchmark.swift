import FolioConflicts
import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// `merge`: the automerge-paper trace forked after its first 129,889 patches; one device applies the next 10,000
/// patches, the other makes 10,000 edits elsewhere in the text (seeded); then one device ingests the other's
/// changes, detects the conflict and merges (strategy `merge`). loro does the same fork and exchange in the run.
enum MergeBenchmark {
    static let forkAt = 129_889
    static let editCount = 10_000
    static let rounds = 5

    static func run() async throws {
        let trace = try EditingTrace(named: "automerge-paper")
        let ours = Array(trace.patches[forkAt..<(forkAt + editCount)])
        // The other device types in the first lines of the text, far from where the trace goes next.
        let touched = ours.map(\.position).min() ?? 0
        var random = SplitMix64(seed: 51)
        var theirs: [EditingTrace.Patch] = []
        var length = 0
        for _ in 0..<editCount {
            let limit = max(1, min(touched / 4, 2_000))
            let position = Int(random.next() % UInt64(limit + length))
            theirs.append(EditingTrace.Patch(position: position, deleted: 0, inserted: "x"))
            length += 1
        }
        var samples: [Double] = []
        var ingests: [Double] = []
        var processorTimes: [Double] = []
        var textOK = true
        var conflicts = 0
        for round in 0..<rounds {
            let outcome = try await mergeOnce(trace: trace, ours: ours, theirs: theirs, seed: UInt64(round))
            samples.append(outcome.milliseconds)
            ingests.append(outcome.ingestMilliseconds)
            processorTimes.append(outcome.processorMilliseconds)
            textOK = textOK && outcome.textOK
            conflicts = outcome.conflicts
        }
        let peerInput = FileManager.default.temporaryDirectory.appendingPathComponent(
            "folio-merge-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: theirs.map { [$0.position, $0.deleted, $0.inserted] }).write(
            to: peerInput)
        defer { try? FileManager.default.removeItem(at: peerInput) }
        let peers = try PythonPeers.run(
            "merge_peers.py", arguments: ["automerge-paper", String(forkAt), String(editCount), peerInput.path])
        let folio = median(samples)
        let loro = peers["loro_ms"] as? Double ?? .nan
        printTable(
            "merge: automerge-paper forked at \(forkAt), \(editCount) edits on each side, median of \(rounds) (\(machineDescription()))",
            [
                ("folio ms (ingest + detect + merge)", format(folio, 2)),
                ("loro ms (import the other side)", format(loro, 2)),
                ("ratio folio / loro", format(folio / loro, 2)),
                ("merged text has both sides", "\(textOK)"),
                ("conflicts left for a person", "\(conflicts)"),
                ("folio rounds ms", samples.map { format($0, 2) }.joined(separator: " ")),
                ("of which ingest ms (median)", format(median(ingests), 2)),
                ("folio CPU ms, all threads (median)", format(median(processorTimes), 2)),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "folio_ms": (folio * 100).rounded() / 100, "loro_ms": loro, "ratio": (folio / loro * 100).rounded() / 100,
            "text_ok": textOK, "folio_cpu_ms": (median(processorTimes) * 100).rounded() / 100,
        ])
    }

    static func mergeOnce(
        trace: EditingTrace, ours: [EditingTrace.Patch], theirs: [EditingTrace.Patch], seed: UInt64
    ) async throws -> (
        milliseconds: Double, ingestMilliseconds: Double, processorMilliseconds: Double, textOK: Bool, conflicts: Int
    ) {
        let scratch = try ScratchDirectory("merge")
        defer { scratch.cleanUp() }
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        func library(_ name: String, _ index: UInt64) throws -> DocumentLibrary {
            try DocumentLibrary(
                at: scratch.url.appendingPathComponent(name),
                key: DeviceKey(using: SeededIdentifierSource(seed: 60 + index + seed * 10)), deviceName: name,
                clock: clock, identifiers: SeededIdentifierSource(seed: 70 + index + seed * 10),
                conflictPolicy: ConflictPolicy(default: .merge), backgroundWork: false)
        }
        let a = try library("A", 0)
        let b = try library("B", 1)
        let first = try await a.create(TextDocument.self, named: "paper")
        for patch in trace.patches[0..<forkAt] { try await apply(patch, to: first) }
        try await first.close()  // saved and checkpointed, as an app would have
        try b.store.ingest(a.store.changes(of: first.id), heads: a.store.signedHeads(of: first.id))
        let onA = try await a.open(first.id, as: TextDocument.self)
        let onB = try await b.open(first.id, as: TextDocument.self)
        for patch in ours { try await apply(patch, to: onA) }
        for patch in theirs { try await apply(patch, to: onB) }
        try await onA.commit()
        try await onB.commit()
        let incoming = try b.store.changes(of: first.id, since: a.store.vector(of: first.id))
        let heads = try b.store.signedHeads(of: first.id)
        var ingestSeconds = 0.0
        let processorBefore = processorSeconds()
        let seconds = try await measureAsync {
            ingestSeconds = try await measureAsync { try a.store.ingest(incoming, heads: heads) }
            try await onA.refresh()
        }
        let processor = processorSeconds() - processorBefore
        let merged = await onA.model.text
        let expectedLength =
            trace.patches[0..<(forkAt + editCount)].reduce(0) { $0 - $1.deleted + $1.inserted.unicodeScalars.count }
            + theirs.count
        let open = try await onA.unresolvedConflictVersions().count
        return (
            seconds * 1000, ingestSeconds * 1000, processor * 1000,
            merged.unicodeScalars.count == expectedLength && open == 0, open
        )
    }

    /// The processor time this process has used, user and system, over all its threads: what a merge costs when the
    /// machine is busy and the wall time also counts the waits for a core.
    static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return user + system
    }

    static func apply(_ patch: EditingTrace.Patch, to document: Document<TextDocument>) async throws {
        if patch.deleted > 0 { try await document.edit(.delete(at: patch.position, count: patch.deleted)) }
        if !patch.inserted.isEmpty { try await document.edit(.insert(at: patch.position, text: patch.inserted)) }
    }
}
