import Folio
import FolioClient
import FolioCore
import FolioModels
import FolioStore
import FolioTestDoubles
import Foundation

/// `catch-up [PATH]`: a new device joins a library whose one document holds a concurrent editing trace (default
/// friendsforever) and receives its whole history from a real `folio serve` (the release build named by
/// `FOLIO_BENCH_FOLIO`) over WebSocket, as a device that starts syncing does. Measured: the bytes the server sends that
/// device (the server's `folio_bytes_out_total`, every frame of the session: hello, runs or changes with their
/// signed heads, notices), once for a client that offers message format 3 (changes as compact runs) and once for a
/// client that speaks format 2 only; each device must end with every change. In the same run, loro replays the same
/// transactions and exports its updates from the empty version, what a new loro peer imports to catch up.
enum CatchUpBenchmark {
    static func run() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        let url =
            arguments.first.map { URL(fileURLWithPath: $0).standardizedFileURL } ?? SignedTraceHistory.defaultTrace
        let executable = try BenchServer.executable(for: "catch-up")
        let trace = try ConcurrentEditingTrace.load(url)
        let scratch = try ScratchDirectory("catch-up")
        defer { scratch.cleanUp() }

        // The history as the agents' devices made it, and a peer that holds it with heads its authors signed.
        let id = DocumentID(UUIDBytes(bytes: Array(repeating: 0x38, count: 16)))
        let signed = try SignedTraceHistory(trace, document: id)
        let history = signed.changes
        let peer = try signed.peer(at: scratch.file("peer.sqlite"), upTo: history.count)
        let expectedHeads = try peer.heads(of: id).map(\.hash)
        // The history as one run, for comparison: what the runs on the wire add to it is their framing and heads.
        let oneRun = try ChangeRunCodec.encode(history, of: id) { _ in nil }.count

        // The server, which the peer fills.
        let data = scratch.file("server")
        let token = try BenchServer.token(executable: executable, library: "catch-up", data: data)
        let server = try BenchServer(executable: executable, data: data, log: scratch.file("server.log"))
        defer { server.stop() }
        let endpoint = try ServerEndpoint(url: server.libraryURL("catch-up"), token: token)
        let upload = try await WebSocketTransport(endpoint: endpoint).sync(peer)
        guard upload.isComplete else { throw BenchError("the peer's upload did not finish: \(upload)") }

        /// A new device's catch-up: the server's bytes out, the time, and whether it ended with every change.
        func catchUp(_ formats: SyncDriver.Formats, name: String) async throws -> (
            bytes: Int, milliseconds: Double, report: SyncReport, ok: Bool
        ) {
            let device = try ChangeLogStore(
                at: scratch.file("\(name).sqlite"), key: DeviceKey(), deviceName: name, access: .exclusive)
            let before = try await server.metrics()["folio_bytes_out_total"] ?? 0
            var report = SyncReport()
            let milliseconds =
                try await measureAsync {
                    report = try await WebSocketTransport(endpoint: endpoint, formats: formats).sync(device)
                } * 1000
            let after = try await server.metrics()["folio_bytes_out_total"] ?? 0
            let received = try device.heads(of: id).map(\.hash)
            let waiting = try device.pendingChanges(of: id)
            let ok = report.isComplete && received == expectedHeads && waiting.isEmpty
            return (Int(after - before), milliseconds, report, ok)
        }
        let runs = try await catchUp(.runsWhenOffered, name: "new-device")
        let plain = try await catchUp(.plain, name: "old-device")
        server.stop()

        let peers = try PythonPeers.run("catch_up_peers.py", arguments: [url.path])
        let loroBytes = peers["loro_update_bytes"] as? Int ?? 0
        let loroOK = peers["text_ok"] as? Bool ?? false
        let ratio = loroBytes > 0 ? Double(runs.bytes) / Double(loroBytes) : .nan

        printTable(
            "catch-up: a new device receives \(history.count) changes (\(trace.transactions.count) transactions) from folio serve",
            [
                ("bytes received, format 3 (runs)", "\(runs.bytes)"),
                ("  runs / messages received", "\(runs.report.runsReceived) / \(runs.report.messagesReceived)"),
                ("  changes received twice (a request repeated)", "\(runs.report.duplicates)"),
                ("  time", format(runs.milliseconds, 0) + " ms"),
                ("bytes received, format 2 (changes)", "\(plain.bytes)"),
                ("  messages received", "\(plain.report.messagesReceived)"),
                ("  changes received twice (a request repeated)", "\(plain.report.duplicates)"),
                ("  time", format(plain.milliseconds, 0) + " ms"),
                ("the history as one run", "\(oneRun)"),
                ("loro update export", "\(loroBytes)"),
                ("format 3 / loro (goal ≤ 1.2)", format(ratio, 3)),
                ("format 2 / format 3", format(Double(plain.bytes) / Double(max(runs.bytes, 1)), 1)),
                ("every change arrived (both devices; loro's text)", "\(runs.ok && plain.ok && loroOK)"),
                ("machine", machineDescription()),
            ])
        printJSON([
            "benchmark": "catch-up",
            "changes": history.count,
            "folio_bytes": runs.bytes,
            "folio_runs": runs.report.runsReceived,
            "folio_duplicates": runs.report.duplicates,
            "one_run_bytes": oneRun,
            "folio_ms": (runs.milliseconds * 10).rounded() / 10,
            "plain_bytes": plain.bytes,
            "plain_ms": (plain.milliseconds * 10).rounded() / 10,
            "loro_update_bytes": loroBytes,
            "ratio": (ratio * 1000).rounded() / 1000,
            "goal_ratio": 1.2,
            "text_ok": runs.ok && plain.ok && loroOK,
        ])
    }
}
