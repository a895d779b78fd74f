import FolioCore
import FolioDocuments
import FolioModels
import FolioStore
import Foundation

/// `pool-latency`: how long a task on Swift's cooperative pool waits while documents save.
///
/// Eight documents each make `rounds` edits, every one saved at once (an append, a file write and two fsyncs). Meanwhile
/// a ticker on the cooperative pool sleeps 1 ms at a time and records how late it wakes. The peer is the same work (the
/// same appends and the same file writes and fsyncs) done by plain tasks on the pool, which is how an actor on the
/// default executor would run it; both run side by side in one process, one after the other.
enum PoolLatencyBenchmark {
    static let documentCount = 8

    static func run() async throws {
        let rounds = benchScale(60)
        let folio = try await measureDocuments(rounds: rounds)
        let peer = try await measureOnPool(rounds: rounds)
        printTable(
            "pool-latency: the ticker's lateness while \(documentCount) documents save \(rounds) times each (\(machineDescription()))",
            [
                ("Document (own queue) lateness median ms", format(folio.median, 3)),
                ("Document (own queue) lateness p99 ms", format(folio.p99, 3)),
                ("Document (own queue) saves/s", format(folio.savesPerSecond, 0)),
                ("peer (work on the pool) lateness median ms", format(peer.median, 3)),
                ("peer (work on the pool) lateness p99 ms", format(peer.p99, 3)),
                ("peer (work on the pool) saves/s", format(peer.savesPerSecond, 0)),
                ("p99 ratio Document/peer", format(folio.p99 / peer.p99, 3)),
            ])
        printJSON([
            "p99_ms": rounded(folio.p99), "median_ms": rounded(folio.median),
            "saves_per_s": folio.savesPerSecond.rounded(),
            "peer_p99_ms": rounded(peer.p99), "peer_median_ms": rounded(peer.median),
            "peer_saves_per_s": peer.savesPerSecond.rounded(),
            "ratio": rounded(folio.p99 / peer.p99),
        ])
    }

    struct Lateness {
        var median: Double
        var p99: Double
        var savesPerSecond: Double
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    /// Runs `work` while a ticker on the pool measures how late its 1 ms sleeps wake, in milliseconds.
    static func ticking(saves: Int, _ work: @escaping @Sendable () async throws -> Void) async throws -> Lateness {
        let done = ManagedFlag()
        let ticker = Task.detached { () -> [Double] in
            var lateness: [Double] = []
            while !done.isSet {
                let start = DispatchTime.now().uptimeNanoseconds
                try? await Task.sleep(nanoseconds: 1_000_000)
                lateness.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 - 1)
            }
            return lateness
        }
        let start = DispatchTime.now().uptimeNanoseconds
        try await work()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        done.set()
        let samples = await ticker.value.sorted()
        return Lateness(
            median: median(samples), p99: samples[min(samples.count - 1, samples.count * 99 / 100)],
            savesPerSecond: Double(saves) / seconds)
    }

    static func measureDocuments(rounds: Int) async throws -> Lateness {
        let scratch = try ScratchDirectory("pool-latency")
        defer { scratch.cleanUp() }
        let library = try DocumentLibrary(
            at: scratch.url, key: DeviceKey(using: SeededIdentifierSource(seed: 41)), deviceName: "bench",
            clock: ManualClock(start: Timestamp(millisecondsSince1970: 1_767_225_600_000)),
            identifiers: SeededIdentifierSource(seed: 42))
        var documents: [Document<TextDocument>] = []
        for index in 0..<documentCount {
            documents.append(
                try await library.create(TextDocument.self, named: "note \(index)", contents: TextDocument(text: "")))
        }
        let opened = documents
        let lateness = try await ticking(saves: documentCount * rounds) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for document in opened {
                    group.addTask {
                        for round in 0..<rounds {
                            try await document.edit(.insert(at: round, text: "a"))
                            _ = try await document.save()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        for document in documents { try await document.close() }
        return lateness
    }

    static func measureOnPool(rounds: Int) async throws -> Lateness {
        let scratch = try ScratchDirectory("pool-latency-peer")
        defer { scratch.cleanUp() }
        let store = try ChangeLogStore(
            at: scratch.file("peer.folio"), key: DeviceKey(using: SeededIdentifierSource(seed: 43)), deviceName: "peer")
        let identifiers = SeededIdentifierSource(seed: 44)
        let ids = (0..<documentCount).map { _ in DocumentID(using: identifiers) }
        let directory = scratch.url
        return try await ticking(saves: documentCount * rounds) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask {
                        var text = ""
                        for round in 0..<rounds {
                            text.append("a")
                            let operation = TextDocument.Operation.insert(at: round, text: "a")
                            try store.append(
                                [.edit(Edit(operations: TextDocument.Operation.encodeGroup([operation])))], to: id)
                            try writeSynced(Data(text.utf8), to: directory.appendingPathComponent("note \(index).txt"))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    /// Writes a temporary file, fsyncs it, renames it over `url` and fsyncs the directory, as a save does.
    static func writeSynced(_ data: Data, to url: URL) throws {
        let temporary = url.appendingPathExtension("tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        rename(temporary.path, url.path)
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY)
        fsync(directory)
        close(directory)
    }
}

/// A flag one task sets and another reads.
final class ManagedFlag: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
