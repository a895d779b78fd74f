import FolioChildProcess
import FolioPostgres
import Foundation
import Logging
import PostgresNIO

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `serve-load`: the server measured alone. `folio serve` (the release build named by `FOLIO_BENCH_FOLIO`), on
/// SQLite or on PostgreSQL, in one process or two over one database, takes the load of ``LoadGenerator``: a process
/// of its own holding `libraries × library-size` raw WebSocket connections that write prebuilt, presigned changes at
/// a steady rate and time the server's pushes to the library's other devices.
///
/// Measured over a window after a warm-up: the changes the servers stored (acknowledged to their writer by a notice),
/// the pushes the devices heard of, the propagation delay from a change's frame being written to another device of its library
/// hearing of it (its notice), the servers' and the database's CPU time per 1,000 changes stored, the servers' peak
/// memory, and the generator's own CPU. The anchor, in the same run, is the same rows inserted straight into the same
/// backend by one client with the same schema, in transactions of the servers' mean ingest batch: plain SQLite into
/// a store-shaped file, or plain SQL into a copy of `folio_change`.
///
/// Arguments: `--backend sqlite|postgres` (sqlite), `--processes 1|2` (1; 2 needs postgres: devices alternate between
/// them, so half of each library's pushes cross processes), `--libraries N` (250), `--library-size K` (4), `--rate R`
/// (changes/s per device, 20), `--warmup S` (5), `--window S` (10), `--tokens server|app` (server: the devices present
/// the server's own tokens; app: each device a token of its own user, signed with Ed25519 as an app's backend signs
/// them). After the run, the CPU per token check of a server of its own, otherwise idle, is measured: 2,000 sync
/// requests with an app token, 2,000 with a server token, and 2,000 `/health` requests for the HTTP request's own
/// cost. PostgreSQL is a throwaway cluster
/// (`Tools/postgres/cluster start`) unless `FOLIO_BENCH_POSTGRES_URL` names a database. `FOLIO_BENCH_DIVISOR`
/// divides the libraries.
enum ServeLoadBenchmark {
    struct Options {
        var backend = "sqlite"
        var tokens = "server"
        var processes = 1
        var libraries = 250
        var librarySize = 4
        var rate = 20.0
        var warmup = 5.0
        var window = 10.0

        init(_ arguments: [String]) throws {
            var rest = arguments[...]
            while let flag = rest.popFirst() {
                guard let value = rest.popFirst() else {
                    throw BenchServerError(message: "serve-load: \(flag) needs a value")
                }
                if flag == "--backend" {
                    guard value == "sqlite" || value == "postgres" else {
                        throw BenchServerError(message: "serve-load: --backend is sqlite or postgres")
                    }
                    backend = value
                    continue
                }
                if flag == "--tokens" {
                    guard value == "server" || value == "app" else {
                        throw BenchServerError(message: "serve-load: --tokens is server or app")
                    }
                    tokens = value
                    continue
                }
                guard let number = Double(value), number > 0 else {
                    throw BenchServerError(message: "serve-load: \(flag) needs a number above 0")
                }
                switch flag {
                case "--processes": processes = Int(number)
                case "--libraries": libraries = Int(number)
                case "--library-size": librarySize = Int(number)
                case "--rate": rate = number
                case "--warmup": warmup = number
                case "--window": window = number
                default: throw BenchServerError(message: "serve-load: unknown argument \(flag)")
                }
            }
            if let divisor = ProcessInfo.processInfo.environment["FOLIO_BENCH_DIVISOR"].flatMap(Int.init), divisor > 1 {
                libraries = max(libraries / divisor, 1)
            }
            guard processes == 1 || (processes == 2 && backend == "postgres") else {
                throw BenchServerError(message: "serve-load: --processes is 1, or 2 with --backend postgres")
            }
            guard librarySize >= 2, libraries >= 1 else {
                throw BenchServerError(message: "serve-load: needs libraries of 2 devices or more")
            }
        }

        var devices: Int { libraries * librarySize }
    }

    /// The servers' and the database's CPU at one instant.
    struct Snapshot {
        var serverCPU: Double
        var databaseCPU: Double
    }

    static func run() async throws {
        let options = try Options(Array(CommandLine.arguments.dropFirst(2)))
        let executable = try BenchServer.executable(for: "serve-load")
        let scratch = try ScratchDirectory("serve-load")
        defer { scratch.cleanUp() }
        let cluster = options.backend == "postgres" ? try PostgresCluster() : nil
        defer { cluster?.stop() }
        let postgres = cluster?.url
        let datas = (0..<options.processes).map { scratch.file("server\($0)") }
        let tokens = try (0..<options.libraries).map {
            try BenchServer.token(executable: executable, library: "load-\($0)", data: datas[0], postgres: postgres)
        }
        // Every server takes app tokens too, whichever tokens the devices present.
        let signer = AppTokenSigner()
        let jwks = scratch.file("jwks.json")
        try signer.writeJWKS(to: jwks)
        let servers = try datas.enumerated().map { index, data in
            try BenchServer(
                executable: executable, data: data, log: scratch.file("server\(index).log"),
                arguments: (postgres.map { ["--postgres", $0] } ?? []) + ["--app-jwks", jwks.path])
        }
        defer { for server in servers { server.stop() } }

        let plan = LoadGenerator.Plan(
            devices: try (0..<options.devices).map { device in
                let library = device / options.librarySize
                return LoadGenerator.PlanDevice(
                    url: servers[device % servers.count].libraryURL("load-\(library)").absoluteString,
                    token: options.tokens == "app"
                        ? try signer.token(user: "user-\(device)", library: "load-\(library)") : tokens[library])
            },
            librarySize: options.librarySize, rate: options.rate, warmup: options.warmup, window: options.window,
            seed: 0x5E12_7E10)
        let planFile = scratch.file("plan.json")
        try JSONEncoder().encode(plan).write(to: planFile)
        let generatorLog = scratch.file("generator.log")
        _ = FileManager.default.createFile(atPath: generatorLog.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: generatorLog)
        defer { try? logHandle.close() }
        let generator = try ChildProcess.start(
            CommandLine.arguments[0], arguments: ["serve-load-generator", planFile.path], standardOutput: .pipe,
            standardError: .descriptor(logHandle.fileDescriptor))
        // Its lines as they come; the stream ends when the generator closes its output.
        let (lines, received) = AsyncStream.makeStream(of: String.self)
        let output = OutputCollector(generator.standardOutput!) { received.yield($0) }
        DispatchQueue.global().async {
            _ = output.wait()
            received.finish()
        }

        // Read from /proc as the generator announces the window (a loaded server answers `/metrics` late).
        func snapshot() -> Snapshot {
            Snapshot(
                serverCPU: servers.map { ProcStats.cpu($0.process.processIdentifier) }.reduce(0) {
                    $0 + $1.user + $1.system
                },
                databaseCPU: cluster.map { ProcStats.treeCPU($0.postmaster) } ?? 0)
        }
        var start: Snapshot?
        var end: Snapshot?
        var report: LoadGenerator.LoadReport?
        for await line in lines {
            switch line {
            case "ready": continue
            case "window-start": start = snapshot()
            case "window-end": end = snapshot()
            default:
                if line.hasPrefix("{") {
                    report = try JSONDecoder().decode(LoadGenerator.LoadReport.self, from: Data(line.utf8))
                }
            }
        }
        _ = generator.wait()
        guard let start, let end, let report else {
            let said = (try? String(contentsOf: generatorLog, encoding: .utf8)) ?? ""
            throw BenchServerError(message: "serve-load: the generator ended early: \(said.suffix(2000))")
        }
        let serverPeak = servers.map { ProcStats.peakRSSMiB($0.process.processIdentifier) }.max() ?? 0
        // Over the whole run: the servers' batches.
        var metrics: [String: Double] = [:]
        for server in servers {
            for (name, value) in try await server.metrics() { metrics[name, default: 0] += value }
        }
        for server in servers { server.stop() }
        // The cost of a token check, on a server of its own that nothing else keeps busy (the loaded ones digest their
        // backlog long after the window): its CPU per request of each kind.
        let checkData = scratch.file("checker")
        let checkToken = try BenchServer.token(executable: executable, library: "load-0", data: checkData)
        let checker = try BenchServer(
            executable: executable, data: checkData, log: scratch.file("checker.log"),
            arguments: ["--app-jwks", jwks.path])
        defer { checker.stop() }
        let checks = try await tokenCheckCost(
            checker,
            requests: [
                ("/health", nil), ("/v1/libraries/load-0/sync", checkToken),
                ("/v1/libraries/load-0/sync", try signer.token(user: "user-check", library: "load-0")),
            ])
        checker.stop()

        let seconds = report.windowSeconds
        let stored = Double(report.acknowledgedInWindow)
        let batches = metrics["folio_ingest_batches_total"] ?? 0
        let meanBatch = batches > 0 ? (metrics["folio_changes_in_total"] ?? 0) / batches : 1
        let anchor: (rate: Double, rows: Int)
        if let postgres {
            anchor = try await postgresAnchor(url: postgres, batch: max(Int(meanBatch.rounded()), 1))
        } else {
            let sqlite = try ServeBenchmark.anchorRate(
                server: servers[0], libraries: options.libraries, batch: max(Int(meanBatch.rounded()), 1),
                scratch: scratch)
            anchor = (sqlite.rate, sqlite.rows)
        }
        let result = Result(
            seconds: seconds, stored: stored / seconds, pushed: Double(report.pushedInWindow) / seconds,
            meanBatch: meanBatch,
            serverCPUPerThousand: stored > 0 ? (end.serverCPU - start.serverCPU) / stored * 1000 : 0,
            databaseCPUPerThousand: stored > 0 ? (end.databaseCPU - start.databaseCPU) / stored * 1000 : 0,
            serverCores: (end.serverCPU - start.serverCPU) / seconds,
            databaseCores: (end.databaseCPU - start.databaseCPU) / seconds,
            generatorCores: report.cpuSecondsInWindow / seconds, serverPeak: serverPeak, anchor: anchor,
            httpMicros: checks[0], serverTokenMicros: checks[1] - checks[0], appTokenMicros: checks[2] - checks[0])
        printReport(options, result, report)
    }

    struct Result {
        var seconds: Double
        var stored: Double
        var pushed: Double
        var meanBatch: Double
        var serverCPUPerThousand: Double
        var databaseCPUPerThousand: Double
        var serverCores: Double
        var databaseCores: Double
        var generatorCores: Double
        var serverPeak: Double
        var anchor: (rate: Double, rows: Int)
        /// Server CPU µs per `/health` request, and per token check beyond it.
        var httpMicros: Double
        var serverTokenMicros: Double
        var appTokenMicros: Double

        /// App token checks a second that 5 % of the server's CPU at this load pays for.
        var appChecksAtFivePercent: Double {
            appTokenMicros > 0 ? 0.05 * serverCores * 1e6 / appTokenMicros : 0
        }
    }

    /// The server's CPU µs per request of each of `requests` (a path and its bearer token), each sent 2,000 times from
    /// four clients at once, one kind after the other.
    static func tokenCheckCost(_ server: BenchServer, requests: [(String, String?)]) async throws -> [Double] {
        let count = 2_000
        var costs: [Double] = []
        for (path, token) in requests {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!)
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let before = ProcStats.cpu(server.process.processIdentifier)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<4 {
                    group.addTask { [request] in
                        for _ in stride(from: client, to: count, by: 4) {
                            _ = try await URLSession.shared.data(for: request)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let after = ProcStats.cpu(server.process.processIdentifier)
            costs.append((after.user + after.system - before.user - before.system) / Double(count) * 1e6)
        }
        return costs
    }

    static func printReport(_ options: Options, _ result: Result, _ report: LoadGenerator.LoadReport) {
        let offered = Double(options.devices) * options.rate
        let ratio = result.anchor.rate > 0 ? result.stored / result.anchor.rate : 0
        let closes = report.closes.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
        printTable(
            "serve-load: folio serve on \(options.backend), \(options.processes) process\(options.processes == 1 ? "" : "es"), \(options.libraries) libraries of \(options.librarySize) devices (\(options.devices) connections), \(format(options.rate, 0)) changes/s per device, \(format(result.seconds, 1)) s window (\(machineDescription()))",
            [
                ("offered changes/s", format(offered)),
                ("written changes/s (generator, in window)", format(Double(report.sentInWindow) / result.seconds)),
                ("stored changes/s (acknowledged to their writer)", format(result.stored)),
                ("pushes/s (changes heard of by another device)", format(result.pushed)),
                ("mean changes per ingest batch (whole run)", format(result.meanBatch, 2)),
                ("propagation p50 ms", format(report.propagationP50, 1)),
                ("propagation p99 ms", format(report.propagationP99, 1)),
                ("propagation samples", "\(report.samples)"),
                ("changes not heard of by every other device 10 s after the end", "\(report.unseen)"),
                ("connections closed by the server", closes.isEmpty ? "none" : closes),
                ("server CPU s per 1,000 changes stored", format(result.serverCPUPerThousand, 3)),
                ("server CPU, cores", format(result.serverCores, 2)),
                ("database CPU s per 1,000 changes stored", format(result.databaseCPUPerThousand, 3)),
                ("database CPU, cores", format(result.databaseCores, 2)),
                ("generator CPU, cores", format(result.generatorCores, 2)),
                ("server peak RSS MiB (largest process)", format(result.serverPeak)),
                ("generator peak RSS MiB", format(report.peakRSSMiB)),
                ("generator build s (changes signed before the clock)", format(report.buildSeconds, 1)),
                ("anchor: rows/s inserted straight into \(options.backend)", format(result.anchor.rate)),
                ("anchor rows", "\(result.anchor.rows)"),
                ("ratio stored/anchor", format(ratio, 3)),
                ("tokens the devices present", options.tokens),
                ("server CPU µs per HTTP request (/health, idle server)", format(result.httpMicros, 1)),
                ("server CPU µs per server-token check beyond it", format(result.serverTokenMicros, 1)),
                ("server CPU µs per app-token (EdDSA) check beyond it", format(result.appTokenMicros, 1)),
                (
                    "app-token checks/s that 5 % of the server's CPU at this load pays for",
                    format(result.appChecksAtFivePercent)
                ),
            ])
        func rounded(_ value: Double, _ digits: Double = 1) -> Double { (value * digits).rounded() / digits }
        printJSON([
            "backend": options.backend, "processes": options.processes, "connections": options.devices,
            "changes_per_s": rounded(result.stored), "offered_changes_per_s": rounded(offered),
            "pushes_per_s": rounded(result.pushed),
            "propagation_ms_p50": rounded(report.propagationP50, 10),
            "propagation_ms_p99": rounded(report.propagationP99, 10),
            "server_cpu_s_per_1000": rounded(result.serverCPUPerThousand, 1000),
            "database_cpu_s_per_1000": rounded(result.databaseCPUPerThousand, 1000),
            "server_rss_mib": rounded(result.serverPeak), "generator_cpu_cores": rounded(result.generatorCores, 100),
            "anchor_changes_per_s": rounded(result.anchor.rate), "ratio": rounded(ratio, 1000),
            "unseen": report.unseen, "duration_s": rounded(result.seconds, 10), "tokens": options.tokens,
            "server_cores": rounded(result.serverCores, 100), "http_request_us": rounded(result.httpMicros, 10),
            "server_token_check_us": rounded(result.serverTokenMicros, 10),
            "app_token_check_us": rounded(result.appTokenMicros, 10),
            "app_checks_per_s_at_5_percent": rounded(result.appChecksAtFivePercent),
        ])
    }

    /// The rows the servers stored in `folio_change`, inserted again by one client into a copy of the table (same
    /// columns, keys and indexes), in transactions of `batch` rows, one statement each as the server writes them.
    static func postgresAnchor(url: String, batch: Int) async throws -> (rate: Double, rows: Int) {
        let configuration = try PostgresLocation(url: url).clientConfiguration(connections: 1, timeout: .seconds(60))
        let client = PostgresClient(configuration: configuration)
        let logger = Logger(label: "serve-load.anchor")
        return try await withThrowingTaskGroup(of: (Double, Int)?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            typealias Row = (String, Int64, ByteBuffer, ByteBuffer, Int64, ByteBuffer, ByteBuffer)
            var rows: [Row] = []
            for try await row in try await client.query(
                "SELECT library, position, document, device, seq, hash, encoded FROM folio_change ORDER BY library, position",
                logger: logger
            ).decode(Row.self) {
                rows.append(row)
            }
            try await client.query("DROP TABLE IF EXISTS anchor_change", logger: logger)
            try await client.query("CREATE TABLE anchor_change (LIKE folio_change INCLUDING ALL)", logger: logger)
            let began = ContinuousClock.now
            for start in stride(from: 0, to: rows.count, by: batch) {
                let slice = rows[start..<min(start + batch, rows.count)]
                let libraries = slice.map(\.0)
                let positions = slice.map(\.1)
                let documents = slice.map(\.2)
                let devices = slice.map(\.3)
                let seqs = slice.map(\.4)
                let hashes = slice.map(\.5)
                let encoded = slice.map(\.6)
                _ = try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        """
                        INSERT INTO anchor_change (library, position, document, device, seq, hash, encoded)
                        SELECT * FROM unnest(\(libraries), \(positions), \(documents), \(devices), \(seqs), \(hashes), \(encoded))
                        """, logger: logger)
                }
            }
            let seconds = (ContinuousClock.now - began).seconds
            try await client.query("DROP TABLE anchor_change", logger: logger)
            return (seconds > 0 ? Double(rows.count) / seconds : 0, rows.count)
        }
    }
}

/// A throwaway PostgreSQL cluster (`Tools/postgres/cluster start`), or the database `FOLIO_BENCH_POSTGRES_URL` names.
final class PostgresCluster: Sendable {
    let url: String
    private let directory: String?
    /// The server's process (`postmaster.pid`), whose children are its backends; 0 for a database named by URL.
    let postmaster: Int32

    init() throws {
        if let url = ProcessInfo.processInfo.environment["FOLIO_BENCH_POSTGRES_URL"] {
            self.url = url
            directory = nil
            postmaster = 0
            return
        }
        let run = try ChildProcess.run("Tools/postgres/cluster", arguments: ["start"])
        let words = run.outputText.split(whereSeparator: \.isWhitespace).map(String.init)
        guard run.termination.succeeded, words.count == 2 else {
            throw BenchServerError(message: "serve-load: Tools/postgres/cluster start failed: \(run.errorText)")
        }
        url = words[0] + "?sslmode=disable"
        directory = words[1]
        let pidText = (try? String(contentsOfFile: words[1] + "/data/postmaster.pid", encoding: .utf8)) ?? ""
        postmaster = pidText.split(separator: "\n").first.flatMap { Int32($0) } ?? 0
    }

    func stop() {
        guard let directory else { return }
        _ = try? ChildProcess.run("Tools/postgres/cluster", arguments: ["stop", directory])
    }
}
