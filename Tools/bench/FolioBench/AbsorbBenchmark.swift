import Folio
import FolioChildProcess
import FolioClient
import FolioCore
import FolioStore
import FolioTestDoubles
import Foundation

/// `absorb [PATH]`: one library, its document open, syncing live with a real `folio serve` (the release build named
/// by `FOLIO_BENCH_FOLIO`), receives a concurrent editing trace's changes (default friendsforever) as the server
/// pushes them while another device uploads them: every change ingested (signed heads checked), and the open document
/// brought up to date with what arrived, batch by batch. The library runs in a process of its own (this executable,
/// `FolioBench absorb-device`), so that its CPU time is its own: measured are the changes absorbed per CPU second of
/// that process, against plain SQLite inserting the same rows (in transactions of 1,000) in this process, in the
/// same run. Three rounds; medians.
enum AbsorbBenchmark {
    static let rounds = 3

    static func run() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        let url =
            arguments.first.map { URL(fileURLWithPath: $0).standardizedFileURL } ?? SignedTraceHistory.defaultTrace
        let executable = try BenchServer.executable(for: "absorb")
        let trace = try ConcurrentEditingTrace.load(url)
        let id = DocumentID(UUIDBytes(bytes: Array(repeating: 0x39, count: 16)))
        let history = try SignedTraceHistory(trace, document: id)
        let total = history.changes.count
        let expectedScalars = trace.endContent.unicodeScalars.count

        var folioRates: [Double] = []
        var sqliteRates: [Double] = []
        var walls: [Double] = []
        var textOK = true
        for round in 0..<rounds {
            let scratch = try ScratchDirectory("absorb")
            defer { scratch.cleanUp() }
            let data = scratch.file("server")
            let token = try BenchServer.token(executable: executable, library: "absorb", data: data)
            let server = try BenchServer(executable: executable, data: data, log: scratch.file("server.log"))
            defer { server.stop() }
            let endpoint = try ServerEndpoint(url: server.libraryURL("absorb"), token: token)
            // The document exists on the server (its first change), so the device can open it before the rest comes.
            let starter = try history.peer(at: scratch.file("starter.sqlite"), upTo: 1)
            guard try await WebSocketTransport(endpoint: endpoint).sync(starter).isComplete else {
                throw BenchError("the first change did not reach the server")
            }
            let status = scratch.file("device-status")
            let library = scratch.file("device")
            let device = try ChildProcess.start(
                CommandLine.arguments[0],
                arguments: [
                    "absorb-device", library.path, server.libraryURL("absorb").absoluteString, token, id.description,
                    "\(total)", "\(expectedScalars)", status.path,
                ], standardOutput: .null, standardError: .inherit)
            defer { if device.isRunning { device.send(SIGKILL) } }
            try await waitFor(status, "ready", device)
            // The rest: uploaded by another device; the server pushes each batch it stores to the open library.
            let uploader = try history.peer(at: scratch.file("uploader.sqlite"), upTo: total)
            guard try await WebSocketTransport(endpoint: endpoint).sync(uploader).isComplete else {
                throw BenchError("the upload did not finish")
            }
            let done = try await waitFor(status, "done", device)
            guard done.count == 4, let cpu = Double(done[1]), let wall = Double(done[2]) else {
                throw BenchError("the device reported \(done)")
            }
            textOK = textOK && done[3] == "ok"
            let absorbed = Double(total - 1)
            folioRates.append(absorbed / cpu)
            walls.append(wall)
            _ = device.wait()

            // The same rows, inserted with plain SQLite.
            let rows = try RawSQLite(library.appendingPathComponent(".folio/store.sqlite"), synchronous: "NORMAL")
                .changeRows()
            let baseline = try AppendBenchmark.makeBaseline(scratch.file("sqlite.sqlite"))
            let seconds = try measure { try baseline.insert(rows, batch: 1_000) }
            sqliteRates.append(Double(rows.count) / seconds)
            print(
                "round \(round + 1): \(format(absorbed / cpu)) changes/CPU s, sqlite \(format(Double(rows.count) / seconds)) rows/s"
            )
        }
        let folio = median(folioRates)
        let sqlite = median(sqliteRates)
        let ratio = folio / sqlite
        printTable(
            "absorb: an open library takes \(total - 1) pushed changes of a concurrent trace from folio serve",
            [
                ("changes absorbed per CPU second (median)", format(folio)),
                ("  wall time to take them all (median)", format(median(walls) * 1000) + " ms"),
                ("plain SQLite rows per second (median)", format(sqlite)),
                ("folio / SQLite (goal ≥ 0.5)", format(ratio, 3)),
                ("the open document shows the whole text", "\(textOK)"),
                ("machine", machineDescription()),
            ])
        printJSON([
            "benchmark": "absorb",
            "changes": total - 1,
            "folio_changes_per_cpu_second": folio.rounded(),
            "sqlite_rows_per_second": sqlite.rounded(),
            "ratio": (ratio * 1000).rounded() / 1000,
            "goal_ratio": 0.5,
            "wall_ms": (median(walls) * 1000).rounded(),
            "text_ok": textOK,
        ])
    }

    /// Waits until the device wrote a status line starting with `word`; returns its words. Fails if the device
    /// exits first, or after five minutes.
    @discardableResult
    static func waitFor(_ status: URL, _ word: String, _ device: ChildProcess) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: status, encoding: .utf8),
                let line = text.split(separator: "\n").last(where: { $0.hasPrefix(word) })
            {
                return line.split(separator: " ").map(String.init)
            }
            if !device.isRunning { throw BenchError("the device exited before it said \(word)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchError("the device did not say \(word) within five minutes")
    }

    /// The device's side (`FolioBench absorb-device LIBRARY URL TOKEN DOCUMENT CHANGES SCALARS STATUS`): opens the
    /// library, syncs live, opens the document once it has arrived and says `ready CPU`; once the log holds CHANGES
    /// changes and the open document shows SCALARS scalars, says `done CPU WALL ok|bad` (CPU seconds and wall
    /// seconds since ready).
    static func device() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        guard arguments.count == 7, let url = URL(string: arguments[1]), let changes = UInt64(arguments[4]),
            let scalars = Int(arguments[5]), let id = DocumentID(arguments[3])
        else { throw BenchError("absorb-device: bad arguments \(arguments)") }
        let status = URL(fileURLWithPath: arguments[6])
        func say(_ line: String) throws {
            let previous = (try? String(contentsOf: status, encoding: .utf8)) ?? ""
            try (previous + line + "\n").write(to: status, atomically: true, encoding: .utf8)
        }
        let library = try DocumentLibrary(
            at: URL(fileURLWithPath: arguments[0]), deviceName: "absorber",
            conflictPolicy: ConflictPolicy(default: .merge))
        let sync = try await library.startSyncing(with: url, token: arguments[2])
        var document: Document<TextDocument>?
        while document == nil {
            document = try? await library.open(id, as: TextDocument.self)
            if document == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let note = document!
        let started = cpuSeconds()
        let wallStart = ContinuousClock.now
        try say("ready \(started.user + started.system)")
        while true {
            let held = try library.store.vector(of: id).changeCount
            if held >= changes, await note.model.scalarCount == scalars { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let ended = cpuSeconds()
        let wall = ContinuousClock.now - wallStart
        let cpu = (ended.user + ended.system) - (started.user + started.system)
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let inConflict = await note.state.contains(.inConflict)
        let ok = await note.model.scalarCount == scalars && !inConflict
        try say("done \(cpu) \(wallSeconds) \(ok ? "ok" : "bad")")
        try await note.close()
        await sync.stop()
    }
}
