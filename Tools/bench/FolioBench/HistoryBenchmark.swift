import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// `history`: the automerge-paper trace typed into a text document through `Document.edit`, a change committed every
/// 100 patches and the document saved every 2,600 (eleven minutes apart on the library's clock, so that each save
/// is a version of its own: about 100). Then, in the library opened again: listing the versions
/// (`Document.history()`, median of 20 calls) and reading the contents at 10 of them spread over the history
/// (`Document.contents(at:)`, each read once, as a person opening an old version would).
enum HistoryBenchmark {
    static let patchesPerChange = 100
    static let patchesPerSave = 2_600
    static let readVersions = 10

    static func run() async throws {
        let trace = try EditingTrace(named: "automerge-paper")
        let patches = trace.patches.prefix(benchScale(trace.patches.count))
        let scratch = try ScratchDirectory("history")
        defer { scratch.cleanUp() }
        let clock = ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        func library() throws -> DocumentLibrary {
            try DocumentLibrary(
                at: scratch.url, key: DeviceKey(using: SeededIdentifierSource(seed: 41)), deviceName: "bench",
                clock: clock, identifiers: SeededIdentifierSource(seed: 42), autosave: .manual, backgroundWork: false)
        }
        var writer: DocumentLibrary? = try library()
        let document = try await writer!.create(TextDocument.self, named: "paper")
        let id = document.id
        for (index, patch) in patches.enumerated() {
            if patch.deleted > 0 { try await document.edit(.delete(at: patch.position, count: patch.deleted)) }
            if !patch.inserted.isEmpty {
                try await document.edit(.insert(at: patch.position, text: patch.inserted))
            }
            if (index + 1) % patchesPerChange == 0 {
                try await document.commit()
                clock.advance(byMilliseconds: 1_000)
            }
            if (index + 1) % patchesPerSave == 0 {
                try await document.save()
                clock.advance(byMilliseconds: 11 * 60_000)
            }
        }
        try await document.close()
        try writer!.store.close()
        writer = nil

        let reader = try library()
        let reopened = try await reader.open(id, as: TextDocument.self)
        var listings: [Double] = []
        var versions: [HistoryVersion] = []
        for _ in 0..<20 {
            listings.append(try await measureAsync { versions = try await reopened.history() } * 1000)
        }
        guard versions.count >= readVersions else {
            throw BenchError("only \(versions.count) versions were recorded")
        }
        // The first read of anything older than the document's checkpoint, timed apart: it reads the store's
        // segments (a cost of the store's first old read, whichever version it is for).
        var cpuBefore = rusage()
        getrusage(RUSAGE_SELF.rawValue, &cpuBefore)
        let firstRead =
            try await measureAsync { _ = try await reopened.contents(at: versions[versions.count / 2]) } * 1000
        var cpuAfter = rusage()
        getrusage(RUSAGE_SELF.rawValue, &cpuAfter)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        let firstReadCPU =
            (seconds(cpuAfter.ru_utime) + seconds(cpuAfter.ru_stime) - seconds(cpuBefore.ru_utime)
                - seconds(cpuBefore.ru_stime)) * 1000
        var reads: [Double] = []
        var textOK = true
        for step in 0..<readVersions {
            let version = versions[step * (versions.count - 1) / (readVersions - 1)]
            var text = ""
            reads.append(try await measureAsync { text = try await reopened.contents(at: version).text } * 1000)
            textOK = textOK && text.unicodeScalars.count > 0
        }
        let finalText = await reopened.model.text
        textOK = textOK && (finalText == trace.endContent || patches.count < trace.patches.count)
        let changes = try reader.store.vector(of: id).changeCount
        try await reopened.close()
        printTable(
            "history: automerge-paper, \(versions.count) versions, \(changes) changes (\(machineDescription()))",
            [
                ("list the versions ms (median of 20)", format(median(listings), 3)),
                (
                    "contents at a version ms: median / max of \(readVersions)",
                    "\(format(median(reads), 2)) / \(format(reads.max()!, 2))"
                ),
                ("contents at each ms", reads.map { format($0, 2) }.joined(separator: " ")),
                ("first old read ms (wall / CPU)", "\(format(firstRead, 1)) / \(format(firstReadCPU, 1))"),
                ("text_ok", "\(textOK)"),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "versions": versions.count, "changes": Int(changes),
            "list_ms": (median(listings) * 1000).rounded() / 1000,
            "contents_ms_median": (median(reads) * 100).rounded() / 100,
            "contents_ms_max": (reads.max()! * 100).rounded() / 100, "goal_ms": 10, "text_ok": textOK,
            "first_read_ms": (firstRead * 10).rounded() / 10, "first_read_cpu_ms": (firstReadCPU * 10).rounded() / 10,
        ])
    }
}
