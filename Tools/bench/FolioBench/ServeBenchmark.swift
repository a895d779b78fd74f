import Folio
import FolioClient
import Foundation
import Synchronization

/// `serve`: devices syncing live through one `folio serve` process (the release build named by `FOLIO_BENCH_FOLIO`)
/// on loopback, every device in this process.
///
/// Devices belong to libraries of `--library-size` devices on the server (one account's devices, as a person's
/// phone, tablet and laptop share one iCloud container); each library has a handful of documents, created on its
/// first device and synced to its other devices before the clock starts. Active devices fill the first libraries;
/// idle devices fill what the last of those leaves, then libraries of their own. Each active device is a real
/// `DocumentLibrary` (own store on disk, exclusive access) syncing with `startSyncing(with:token:)`; it appends one
/// committed edit (a text append, through its library's store) at a steady rate, to its library's documents in turn.
/// Idle devices are lighter: a `LiveSync` on an in-memory store, which receives everything as a library does but
/// refreshes no documents and writes no files. The first device of each library also observes: it keeps the
/// library's documents open (`TextDocument`) and takes each of its `.documentChanged` events as the moment the
/// changes named by its store's vector reached its open document (events come after the open documents are
/// refreshed), one clock for both ends.
///
/// Measured over a window after a warm-up: the changes the server stored (`folio_changes_in_total`), the propagation
/// delay from another device's append to its library's observer's event, the CPU time of the server and of this
/// process, and the server's peak memory. The anchor is the same rows (every change the server stored) inserted with
/// plain SQLite into a fresh store-shaped database, in transactions of the server's mean ingest batch.
///
/// Arguments: `--devices N` (100), `--active M` (all), `--library-size K` (devices per library, 4), `--rate R`
/// (changes/s per active device, 50), `--documents D` (per library, 10), `--warmup S` (5), `--window S` (15).
/// `FOLIO_BENCH_DIVISOR` divides the devices and shortens the window.
enum ServeBenchmark {
    struct Options {
        var devices = 100
        var active: Int?
        var librarySize = 4
        var rate = 50.0
        var documents = 10
        var warmup = 5.0
        var window = 15.0

        init(_ arguments: [String]) throws {
            var rest = arguments[...]
            while let flag = rest.popFirst() {
                guard let value = rest.popFirst(), let number = Double(value), number >= 0 else {
                    throw BenchServerError(message: "serve: \(flag) needs a number")
                }
                switch flag {
                case "--devices": devices = Int(number)
                case "--active": active = Int(number)
                case "--library-size": librarySize = Int(number)
                case "--rate": rate = number
                case "--documents": documents = Int(number)
                case "--warmup": warmup = number
                case "--window": window = number
                default: throw BenchServerError(message: "serve: unknown argument \(flag)")
                }
            }
            if let divisor = ProcessInfo.processInfo.environment["FOLIO_BENCH_DIVISOR"].flatMap(Int.init),
                divisor > 1
            {
                devices = max(devices / divisor, 4)
                active = active.map { max($0 / divisor, 2) }
                warmup = max(warmup / Double(divisor), 2)
                window = max(window / Double(divisor), 3)
            }
            active = min(active ?? devices, devices)
            guard devices >= 2, active! >= 1, documents >= 1, rate > 0, librarySize >= 2 else {
                throw BenchServerError(
                    message: "serve: needs 2 devices or more, 1 active or more, libraries of 2 or more, a rate above 0")
            }
        }

        /// The libraries on the server: device `d` (active ones first) belongs to library `d / librarySize`.
        var libraries: Int { (devices + librarySize - 1) / librarySize }
    }

    static func libraryName(_ index: Int) -> String { "bench-\(index)" }

    static func run() async throws {
        let options = try Options(Array(CommandLine.arguments.dropFirst(2)))
        let executable = try BenchServer.executable(for: "serve")
        let scratch = try ScratchDirectory("serve")
        defer { scratch.cleanUp() }
        let data = scratch.file("server")
        let tokens = try (0..<options.libraries).map {
            try BenchServer.token(executable: executable, library: libraryName($0), data: data)
        }
        let server = try BenchServer(executable: executable, data: data, log: scratch.file("server.log"))
        defer { server.stop() }
        let bench = try await Bench(options: options, server: server, tokens: tokens, scratch: scratch)
        let result = try await bench.measure()
        await bench.stop()
        let probe = bench.probe()
        let serverPeak = ProcStats.peakRSSMiB(server.process.processIdentifier)
        let exited = server.stop()
        let anchor = try anchorRate(
            server: server, libraries: options.libraries, batch: result.meanBatch, scratch: scratch)
        let stopping = [("server exited within 30 s of SIGTERM", exited ? "yes" : "no (killed)")]
        report(options, result, serverPeak: serverPeak, anchor: anchor, probe: probe + stopping)
    }

    /// Plain SQLite's rate for every change the server stored, inserted in transactions of `batch` rows into a
    /// fresh database with the store's schema.
    static func anchorRate(server: BenchServer, libraries: Int, batch: Int, scratch: ScratchDirectory) throws -> (
        rate: Double, rows: Int, bytes: Double
    ) {
        var rows: [RawSQLite.ChangeRow] = []
        // Every library's log, whatever the server names its file.
        let directory = server.data.appendingPathComponent("libraries")
        let logs = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".sqlite")
        }
        .sorted().map { directory.appendingPathComponent($0) }
        for (index, log) in logs.enumerated() {
            // Documents and devices are numbered per file: offset so that every library's rows stay apart.
            rows += try RawSQLite(log, synchronous: "NORMAL").changeRows().map { row in
                var row = row
                row.document += Int64(index) << 32
                row.device += Int64(index) << 32
                return row
            }
        }
        let baseline = try AppendBenchmark.makeBaseline(scratch.file("anchor.sqlite"))
        let seconds = try measure { try baseline.insert(rows, batch: max(batch, 1)) }
        let bytes = Double(rows.reduce(0) { $0 + $1.body.count }) / Double(max(rows.count, 1))
        return (Double(rows.count) / seconds, rows.count, bytes)
    }

    static func report(
        _ options: Options, _ result: Bench.Result, serverPeak: Double,
        anchor: (rate: Double, rows: Int, bytes: Double),
        probe: [(String, String)]
    ) {
        let active = options.active!
        let offered = Double(active) * options.rate
        let ratio = result.changesPerSecond / anchor.rate
        let idle = options.devices - active
        let kinds =
            idle == 0
            ? "\(options.devices) devices, all active"
            : "\(active) active devices (a DocumentLibrary each) + \(idle) idle (LiveSync on in-memory stores)"
        let bound = result.unseen > 0 ? "at least " : ""
        func threads(_ byName: [(String, Double)]) -> String {
            byName.prefix(5).map { "\($0.0) \(format($0.1, 1))" }.joined(separator: ", ")
        }
        printTable(
            "serve: \(kinds), \(options.libraries) libraries of \(options.librarySize) devices, \(options.documents) shared documents per library, \(format(options.rate, 0)) changes/s per active device, all devices in this process, \(format(result.window, 1)) s window (\(machineDescription()))",
            [
                ("offered changes/s", format(offered)),
                ("appended changes/s (devices)", format(result.appendedPerSecond)),
                ("stored changes/s (server)", format(result.changesPerSecond)),
                ("changes out/s (server, passed on)", format(result.changesOutPerSecond)),
                ("server ingest batches/s", format(result.batchesPerSecond)),
                ("mean changes per ingest batch", format(result.meanBatchExact, 1)),
                ("propagation p50 ms", bound + format(result.p50, 1)),
                ("propagation p99 ms", bound + format(result.p99, 1)),
                ("propagation samples seen", "\(result.samples)"),
                ("not seen 5 s after the window (in the quantiles at that age)", "\(result.unseen)"),
                ("plain SQLite rows/s (anchor)", format(anchor.rate)),
                ("anchor rows", "\(anchor.rows)"),
                ("mean stored change body bytes (parents: concurrent heads)", format(anchor.bytes)),
                ("ratio server/sqlite", format(ratio, 3)),
                ("server CPU s in window (user+sys)", format(result.serverCPU, 1)),
                ("server CPU share of 1 core", format(result.serverCPU / result.window, 2)),
                ("bench CPU s in window (user+sys)", format(result.benchCPU, 1)),
                ("bench CPU share of 1 core", format(result.benchCPU / result.window, 2)),
                ("server threads (CPU s)", threads(result.serverThreads)),
                ("bench threads (CPU s)", threads(result.benchThreads)),
                ("server peak RSS MiB (VmHWM)", format(serverPeak)),
                ("bench peak RSS MiB", format(peakMemoryMiB())),
                ("connections open at the window's end", format(result.connections)),
                ("connections opened in the window (reconnections)", format(result.reconnections)),
            ] + probe)
        func rounded(_ value: Double, _ digits: Double = 1) -> Double { (value * digits).rounded() / digits }
        printJSON([
            "devices": options.devices, "active_devices": active, "library_size": options.librarySize,
            "changes_per_s": rounded(result.changesPerSecond), "offered_changes_per_s": rounded(offered),
            "appended_changes_per_s": rounded(result.appendedPerSecond),
            "propagation_ms_p50": rounded(result.p50, 10), "propagation_ms_p99": rounded(result.p99, 10),
            "server_rss_mib": rounded(serverPeak), "anchor_changes_per_s": rounded(anchor.rate),
            "ratio": rounded(ratio, 1000), "duration_s": rounded(result.window, 10),
            "server_cpu_s": rounded(result.serverCPU, 10), "bench_cpu_s": rounded(result.benchCPU, 10),
            "propagation_unseen": result.unseen,
        ])
    }
}

/// The devices of one run: the libraries, their writers and observers, and the idle devices.
final class Bench: Sendable {
    struct Result {
        var window: Double
        var changesPerSecond: Double
        var changesOutPerSecond: Double
        var batchesPerSecond: Double
        var meanBatchExact: Double
        var meanBatch: Int { Int(meanBatchExact.rounded()) }
        var appendedPerSecond: Double
        var p50: Double
        var p99: Double
        var samples: Int
        var unseen: Int
        var serverCPU: Double
        var benchCPU: Double
        var serverThreads: [(String, Double)]
        var benchThreads: [(String, Double)]
        var connections: Double
        var reconnections: Double
    }

    /// An active device: a library, its sync, and the instants of its appends.
    final class Writer: Sendable {
        let index: Int
        let library: DocumentLibrary
        let sync: LibrarySync
        /// Per document of its library, the uptime (ns) at which each of this device's appends started, by sequence
        /// number - 1.
        let started: Mutex<[[UInt64]]>

        init(index: Int, library: DocumentLibrary, sync: LibrarySync, documents: Int) {
            self.index = index
            self.library = library
            self.sync = sync
            started = Mutex(Array(repeating: [], count: documents))
        }
    }

    /// A library on the server with active devices: its writers (the first observes), its documents, and the
    /// observer's open documents.
    final class Group: Sendable {
        let writers: [Writer]
        let documents: [DocumentID]
        let observed: [Document<TextDocument>]

        var observer: Writer { writers[0] }

        init(writers: [Writer], documents: [DocumentID], observed: [Document<TextDocument>]) {
            self.writers = writers
            self.documents = documents
            self.observed = observed
        }
    }

    let options: ServeBenchmark.Options
    let server: BenchServer
    let groups: [Group]
    let idle: [LiveSync]
    /// The window, as uptime nanoseconds; appends started inside it are sampled. Atomics, not a lock: a hundred
    /// writer threads on two cores read them at every append, and a lock there convoys.
    let windowStart = Atomic<UInt64>(.max)
    let windowEnd = Atomic<UInt64>(.max)
    var window: (start: UInt64, end: UInt64) {
        (windowStart.load(ordering: .acquiring), windowEnd.load(ordering: .acquiring))
    }
    let latencies = Mutex<[Double]>([])
    /// Per writer (by index), per document of its library, the last sequence number its observer saw.
    let seen: Mutex<[[UInt64]]>
    let appendedInWindow = Atomic<Int>(0)
    let running = Atomic<Bool>(true)

    var writers: [Writer] { groups.flatMap(\.writers) }

    init(options: ServeBenchmark.Options, server: BenchServer, tokens: [String], scratch: ScratchDirectory) async throws
    {
        self.options = options
        self.server = server
        let active = options.active!
        seen = Mutex(Array(repeating: Array(repeating: 0, count: options.documents), count: active))
        try FileManager.default.createDirectory(at: scratch.file("devices"), withIntermediateDirectories: true)
        func url(_ library: Int) -> URL { server.libraryURL(ServeBenchmark.libraryName(library)) }
        var groups: [Group] = []
        for library in 0..<((active + options.librarySize - 1) / options.librarySize) {
            let members = (library * options.librarySize)..<min((library + 1) * options.librarySize, active)
            var writers: [Writer] = []
            var observed: [Document<TextDocument>] = []
            for index in members {
                let device = try DocumentLibrary(
                    at: scratch.file("devices/\(index)"), deviceName: "device \(index)", access: .exclusive)
                // The library's first device creates its documents and keeps them open: it is the observer.
                if index == members.lowerBound {
                    for number in 0..<options.documents {
                        observed.append(try await device.create(TextDocument.self, named: "doc \(number)", in: .shared))
                    }
                }
                await writers.append(
                    Writer(
                        index: index, library: device,
                        sync: try device.startSyncing(with: url(library), token: tokens[library]),
                        documents: options.documents))
            }
            groups.append(Group(writers: writers, documents: observed.map(\.id), observed: observed))
        }
        self.groups = groups
        let stores = groups.flatMap { $0.writers.map(\.library.store) }
        try await Self.waitUntilConnected(stores, count: stores.count, documents: options.documents, server)
        // Idle devices connect a hundred at a time, each hundred once the ones before are caught up: with 1,000
        // connections opened at once the server took more than a minute to answer `/metrics`. An idle device in a
        // library of active ones holds its documents once caught up; one in a library of its own has none.
        var idleStores: [(ChangeLogStore, documents: Int)] = []
        var idle: [LiveSync] = []
        for index in active..<options.devices {
            let library = index / options.librarySize
            let store = try ChangeLogStore(
                inMemoryNamed: "idle-\(index)", key: DeviceKey(), deviceName: "idle \(index)")
            idleStores.append((store, library < groups.count ? options.documents : 0))
            idle.append(
                LiveSync(store: store, endpoint: try ServerEndpoint(url: url(library), token: tokens[library])) { _ in }
            )
            if idleStores.count % 100 == 0 || index == options.devices - 1 {
                for documents in Set(idleStores.map(\.documents)).sorted() {
                    try await Self.waitUntilConnected(
                        idleStores.filter { $0.documents == documents }.map(\.0),
                        count: stores.count + idleStores.count, documents: documents, server)
                }
            }
        }
        self.idle = idle
    }

    /// Waits until `stores` hold `documents` documents each and `count` connections are open.
    private static func waitUntilConnected(
        _ stores: [ChangeLogStore], count: Int, documents: Int, _ server: BenchServer
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            let missing = try stores.filter { try $0.summaries().count < documents }.count
            let open = try await server.metrics()["folio_connections_open"] ?? 0
            if missing == 0 && Int(open) >= count { return }
            guard ContinuousClock.now < deadline else {
                throw BenchServerError(
                    message: "serve: \(missing) devices still lack documents, \(Int(open)) connections open after 300 s"
                )
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Runs the writers and the observers, warms up, measures one window, and stops the writers.
    func measure() async throws -> Result {
        // The observers read their stores (blocking calls): on queues of their own, off the cooperative pool.
        let observers = groups.map { group in
            Task(executorPreference: BlockingWorkExecutor(label: "bench.observer")) { await self.observe(group) }
        }
        let appenders = groups.flatMap { group in
            group.writers.map { writer in
                Task(executorPreference: BlockingWorkExecutor(label: "bench.writer.\(writer.index)")) {
                    await self.append(writer, to: group.documents)
                }
            }
        }
        try await Task.sleep(for: .seconds(options.warmup))
        let before = try await snapshot()
        windowStart.store(before.uptime, ordering: .releasing)
        try await Task.sleep(for: .seconds(options.window))
        let after = try await snapshot()
        windowEnd.store(after.uptime, ordering: .releasing)
        running.store(false, ordering: .relaxed)
        for appender in appenders { await appender.value }
        // Changes appended near the window's end still travel: the observers have a few seconds to see them.
        let deadline = ContinuousClock.now + .seconds(5)
        let expected = appendedInWindow.load(ordering: .relaxed) - appendedByObserversInWindow()
        while ContinuousClock.now < deadline, latencies.withLock({ $0.count }) < expected {
            try await Task.sleep(for: .milliseconds(100))
        }
        for observer in observers { observer.cancel() }
        for observer in observers { _ = await observer.value }
        // What never showed is counted at its age now: the quantiles are then lower bounds.
        let now = DispatchTime.now().uptimeNanoseconds
        var censored: [Double] = []
        for writer in groups.flatMap({ $0.writers.dropFirst() }) {
            let last = seen.withLock { $0[writer.index] }
            writer.started.withLock { started in
                for slot in started.indices {
                    for began in started[slot].dropFirst(Int(last[slot]))
                    where began >= before.uptime && began <= after.uptime {
                        censored.append(Double(now - began) / 1e6)
                    }
                }
            }
        }
        let seconds = Double(after.uptime - before.uptime) / 1e9
        let seenSamples = latencies.withLock { $0 }
        let samples = seenSamples + censored
        func delta(_ name: String) -> Double { (after.metrics[name] ?? 0) - (before.metrics[name] ?? 0) }
        func threads(_ end: [String: Double], _ start: [String: Double]) -> [(String, Double)] {
            end.map { ($0.key, $0.value - (start[$0.key] ?? 0)) }.sorted { $0.1 > $1.1 }
        }
        let batches = delta("folio_ingest_batches_total")
        return Result(
            window: seconds,
            changesPerSecond: delta("folio_changes_in_total") / seconds,
            changesOutPerSecond: delta("folio_changes_out_total") / seconds,
            batchesPerSecond: batches / seconds,
            meanBatchExact: batches > 0 ? delta("folio_changes_in_total") / batches : 1,
            appendedPerSecond: Double(appendedInWindow.load(ordering: .relaxed)) / seconds,
            p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), samples: seenSamples.count,
            unseen: censored.count,
            serverCPU: after.serverCPU - before.serverCPU, benchCPU: after.benchCPU - before.benchCPU,
            serverThreads: threads(after.serverThreads, before.serverThreads),
            benchThreads: threads(after.benchThreads, before.benchThreads),
            connections: after.metrics["folio_connections_open"] ?? 0,
            reconnections: delta("folio_connections_opened_total"))
    }

    /// The observers' own appends in the window (not sampled: they start on the observer).
    private func appendedByObserversInWindow() -> Int {
        let (start, end) = window
        return groups.reduce(0) { total, group in
            total + group.observer.started.withLock { $0.joined().filter { $0 >= start && $0 <= end }.count }
        }
    }

    struct Snapshot {
        var uptime: UInt64
        var metrics: [String: Double]
        var serverCPU: Double
        var benchCPU: Double
        var serverThreads: [String: Double]
        var benchThreads: [String: Double]
    }

    private func snapshot() async throws -> Snapshot {
        let pid = server.process.processIdentifier
        // The counters are read over HTTP, which takes a while on a loaded machine: the snapshot's instant is the
        // middle of the request, and the CPU times are read there too.
        let asked = DispatchTime.now().uptimeNanoseconds
        let metrics = try await self.server.metrics()
        let answered = DispatchTime.now().uptimeNanoseconds
        let server = ProcStats.cpu(pid)
        let bench = cpuSeconds()
        return Snapshot(
            uptime: asked + (answered - asked) / 2, metrics: metrics, serverCPU: server.user + server.system,
            benchCPU: bench.user + bench.system, serverThreads: ProcStats.cpuByThread(pid),
            benchThreads: ProcStats.cpuByThread(getpid()))
    }

    /// One active device: an append every 1/rate s, to its library's documents in turn, until told to stop. The
    /// appends block (the store's calls do), on the task's executor of its own; the waits between them suspend.
    private func append(_ writer: Writer, to documents: [DocumentID]) async {
        let interval = UInt64(1e9 / options.rate)
        let operations = TextDocument.Operation.encodeGroup([.append("x")])
        var next = DispatchTime.now().uptimeNanoseconds + UInt64.random(in: 0..<interval)
        var turn = writer.index
        while running.load(ordering: .relaxed) {
            let now = DispatchTime.now().uptimeNanoseconds
            if next > now { try? await Task.sleep(nanoseconds: next - now) }
            next += interval
            let slot = turn % documents.count
            turn += 1
            let start = DispatchTime.now().uptimeNanoseconds
            writer.started.withLock { $0[slot].append(start) }
            do {
                try writer.library.store.append(.edit(Edit(operations: operations)), to: documents[slot])
            } catch {
                writer.started.withLock { _ = $0[slot].popLast() }
                FileHandle.standardError.write(Data("serve: device \(writer.index) failed to append: \(error)\n".utf8))
                return
            }
            let (windowStart, windowEnd) = window
            if start >= windowStart && start <= windowEnd { appendedInWindow.add(1, ordering: .relaxed) }
        }
    }

    /// A library's observer's events: at each `.documentChanged`, every change its store's vector newly names for
    /// the document is taken as arrived now.
    private func observe(_ group: Group) async {
        let observer = group.observer
        let others = group.writers.dropFirst()
        var seen = self.seen.withLock { $0 }
        let index = Dictionary(uniqueKeysWithValues: group.documents.enumerated().map { ($0.element, $0.offset) })
        for await event in observer.sync.events {
            guard case .documentChanged(let document) = event, let slot = index[document] else { continue }
            let now = DispatchTime.now().uptimeNanoseconds
            guard let vector = try? observer.library.store.vector(of: document) else { continue }
            let (start, end) = window
            var arrived: [Double] = []
            for writer in others {
                let upTo = vector[writer.library.device.id]
                guard upTo > seen[writer.index][slot] else { continue }
                writer.started.withLock { started in
                    let from = Int(seen[writer.index][slot])
                    for seq in from..<max(min(Int(upTo), started[slot].count), from) {
                        let began = started[slot][seq]
                        if began >= start && began <= end { arrived.append(Double(now - began) / 1e6) }
                    }
                }
                seen[writer.index][slot] = upTo
            }
            if !arrived.isEmpty { latencies.withLock { $0.append(contentsOf: arrived) } }
            // Only this group's writers' rows changed: write them back alone (other observers write theirs).
            self.seen.withLock { shared in
                for writer in others { shared[writer.index] = seen[writer.index] }
            }
        }
    }

    /// What a library does for each message that brings changes (`DocumentLibrary.startSyncing` calls these for
    /// every document a received message updated), timed on the second device of the first library once every
    /// sync stopped: milliseconds a call, median of 20, on its first document, with its number of heads.
    func probe() -> [(String, String)] {
        guard let group = groups.first, group.writers.count > 1 else { return [] }
        let library = group.writers[1].library
        let document = group.documents[0]
        func time(_ body: () throws -> Void) -> String {
            let samples = (0..<20).map { _ in ((try? FolioBench.measure(body)) ?? .nan) * 1000 }
            return format(median(samples), 3)
        }
        let heads = (try? library.store.summaries().first { $0.document == document }?.heads.count) ?? 0
        let changes = (try? library.store.vector(of: document))?.entries.reduce(0) { $0 + $1.seq } ?? 0
        return [
            ("probe: document 0 on device 1, heads / changes", "\(heads) / \(changes)"),
            ("probe: library.info(of:) ms", time { _ = try library.catalogInfo(of: document) }),
            ("probe: library.hasCompetingVersions(_:) ms", time { _ = try library.contentHeads(of: document) }),
            ("probe: library.updateFile(of:) ms", time { try library.followFile(of: document) }),
            ("probe: store.vector(of:) ms", time { _ = try library.store.vector(of: document) }),
        ]
    }

    /// Stops every sync, concurrently.
    func stop() async {
        await withTaskGroup(of: Void.self) { group in
            for writer in writers { group.addTask { await writer.sync.stop() } }
            for live in idle { group.addTask { await live.stop() } }
        }
        for group in groups {
            for document in group.observed { try? await document.close() }
        }
    }
}
