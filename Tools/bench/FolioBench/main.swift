import Foundation

// `FolioBench NAME`: runs one benchmark; `Tools/bench/run NAME` builds this in release mode and calls it.
// Each benchmark prints a readable table and, as its very last line, one JSON object. Arguments after NAME go to the
// benchmark (only `serve`, `serve-load`, `concurrent-trace`, `catch-up`, `live-typing` and `absorb` take any).

let benchmarks: [String: () async throws -> Void] = [
    "append": AppendBenchmark.run,
    "ingest": IngestBenchmark.run,
    "sync-delta": SyncDeltaBenchmark.run,
    "trace": TraceBenchmark.run,
    "open": OpenBenchmark.run,
    "package-save": PackageSaveBenchmark.run,
    "merge": MergeBenchmark.run,
    "concurrent-trace": ConcurrentTraceBenchmark.run,
    "fuzz": FuzzBenchmark.run,
    "waiting": WaitingBenchmark.run,
    "pool-latency": PoolLatencyBenchmark.run,
    "serve": ServeBenchmark.run,
    "catch-up": CatchUpBenchmark.run,
    "live-typing": LiveTypingBenchmark.run,
    "absorb": AbsorbBenchmark.run,
    "history": HistoryBenchmark.run,
    "blob-sync": BlobSyncBenchmark.run,
    "serve-load": ServeLoadBenchmark.run,
    // The library process `absorb` starts.
    "absorb-device": AbsorbBenchmark.device,
    // The load generator process `serve-load` starts.
    "serve-load-generator": LoadGenerator.main,
]

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let benchmark = benchmarks[name] else {
    FileHandle.standardError.write(Data("usage: FolioBench \(benchmarks.keys.sorted().joined(separator: "|"))\n".utf8))
    exit(2)
}
do {
    try await benchmark()
} catch {
    FileHandle.standardError.write(Data("FolioBench \(name) failed: \(error)\n".utf8))
    exit(1)
}
