import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// `open`: opening a text document with 1,000,000 changes and one with 1,000. Both end with the same small text
/// (each change types or erases one character), so the comparison isolates the cost of history. Each document
/// is opened once first, as after a bulk import; its close takes the checkpoint later opens start from.
enum OpenBenchmark {
    static let repetitions = 50

    static func run() async throws {
        let large = try await measureOpen(changeCount: benchScale(1_000_000))
        let small = try await measureOpen(changeCount: 1_000)
        printTable(
            "open: a text document's open, median of \(repetitions) (\(machineDescription()))",
            [
                ("1,000,000-change document ms", format(large.milliseconds, 3)),
                ("1,000-change document ms", format(small.milliseconds, 3)),
                ("growth large/small", format(large.milliseconds / small.milliseconds, 2)),
                ("first open of the large one ms (full replay)", format(large.firstOpen, 1)),
                (
                    "first open's peak memory MiB (rise over the \(format(large.residentBefore)) MiB before it)",
                    "\(format(large.firstOpenPeak)) (\(format(large.firstOpenPeak - large.residentBefore)))"
                ),
                ("final text scalars (both)", "\(large.textLength) / \(small.textLength)"),
                ("peak memory MiB", format(peakMemoryMiB())),
            ])
        printJSON([
            "ms_large": (large.milliseconds * 1000).rounded() / 1000,
            "ms_small": (small.milliseconds * 1000).rounded() / 1000,
            "growth": (large.milliseconds / small.milliseconds * 100).rounded() / 100,
            "first_open_ms": (large.firstOpen * 10).rounded() / 10,
            "first_open_peak_mib": (large.firstOpenPeak * 10).rounded() / 10,
        ])
    }

    static func measureOpen(changeCount: Int) async throws -> (
        milliseconds: Double, firstOpen: Double, firstOpenPeak: Double, residentBefore: Double, textLength: Int
    ) {
        let scratch = try ScratchDirectory("open")
        defer { scratch.cleanUp() }
        let library = try DocumentLibrary(
            at: scratch.url, key: DeviceKey(using: SeededIdentifierSource(seed: 31)), deviceName: "bench",
            clock: ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000)),
            identifiers: SeededIdentifierSource(seed: 32))
        let created = try await library.create(
            TextDocument.self, named: "history", contents: TextDocument(text: String(repeating: "a", count: 500)))
        let id = created.id
        try await created.close()
        // History straight into the log, a batch at a time: type a character, then erase it, near the middle.
        var kinds: [ChangeKind] = []
        for index in 0..<changeCount {
            let operation: TextDocument.Operation =
                index % 2 == 0 ? .insert(at: 250, text: "b") : .delete(at: 250, count: 1)
            kinds.append(.edit(Edit(operations: TextDocument.Operation.encodeGroup([operation]))))
            if kinds.count == 10_000 {
                try library.store.append(kinds, to: id)
                kinds.removeAll(keepingCapacity: true)
            }
        }
        if !kinds.isEmpty { try library.store.append(kinds, to: id) }
        var textLength = 0
        let residentBefore = residentMiB()
        resetPeakResident()
        let firstOpen = try await measureAsync {
            let document = try await library.open(id, as: TextDocument.self)
            textLength = await document.model.scalarCount
            try await document.close()
        }
        let firstOpenPeak = peakResidentMiB()
        var samples: [Double] = []
        for _ in 0..<repetitions {
            var document: Document<TextDocument>?
            samples.append(try await measureAsync { document = try await library.open(id, as: TextDocument.self) })
            let length = await document!.model.scalarCount
            precondition(length == textLength)
            try await document!.close()
        }
        return (median(samples) * 1000, firstOpen * 1000, firstOpenPeak, residentBefore, textLength)
    }
}
