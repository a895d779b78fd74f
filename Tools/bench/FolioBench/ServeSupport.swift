import FolioChildProcess
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `folio serve` process (the release build named by `FOLIO_BENCH_FOLIO`) on loopback, with its data directory.
/// It dies with the benchmark, however that ends (see FolioChildProcess).
final class BenchServer: Sendable {
    let process: ChildProcess
    let port: Int
    let data: URL
    let executable: URL

    /// Starts `folio serve --port 0 --data DATA` (and `arguments`), its standard error going to `log`, and waits for
    /// its address.
    init(executable: URL, data: URL, log: URL, arguments: [String] = []) throws {
        self.executable = executable
        self.data = data
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process = try ChildProcess.start(
            // Every device connects from loopback: one address holds them all.
            executable.path,
            arguments: ["serve", "--port", "0", "--data", data.path, "--max-connections-per-address", "100000"]
                + arguments,
            standardOutput: .pipe, standardError: .descriptor(logHandle.fileDescriptor))
        let output = process.standardOutput!
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !text.contains("\n") {
            let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                close(output)
                throw BenchServerError(message: "folio serve exited before it listened; see \(log.path)")
            }
            text += String(decoding: buffer[..<count], as: UTF8.self)
        }
        // Whatever else it prints is read and dropped.
        _ = OutputCollector(output)
        guard text.contains("listening on"),
            let port = text.split(separator: "\n").first?.split(separator: ":").last.flatMap({ Int($0) })
        else { throw BenchServerError(message: "folio serve said: \(text)") }
        self.port = port
    }

    /// The release `folio` executable that `FOLIO_BENCH_FOLIO` names (`Tools/bench/run` sets it), for the benchmark
    /// `benchmark`.
    static func executable(for benchmark: String) throws -> URL {
        guard let path = ProcessInfo.processInfo.environment["FOLIO_BENCH_FOLIO"] else {
            throw BenchServerError(
                message: "\(benchmark): FOLIO_BENCH_FOLIO must name the folio executable (Tools/bench/run sets it)")
        }
        return URL(fileURLWithPath: path)
    }

    /// Issues a token for `library` with `folio serve token create` (in the PostgreSQL database `postgres`, if given).
    static func token(executable: URL, library: String, data: URL, postgres: String? = nil) throws -> String {
        let run = try ChildProcess.run(
            executable.path,
            arguments: ["serve", "token", "create", "--library", library, "--data", data.path]
                + (postgres.map { ["--postgres", $0] } ?? []),
            standardError: .null)
        guard run.termination.succeeded else {
            throw BenchServerError(message: "folio serve token create failed (\(run.termination))")
        }
        return run.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func libraryURL(_ name: String) -> URL { URL(string: "ws://127.0.0.1:\(port)/v1/libraries/\(name)")! }

    /// The counters and gauges of `GET /metrics`, by name (labels kept in the name).
    func metrics() async throws -> [String: Double] {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        // A loaded server answers late; the default minute is not always enough with 1,000 connections.
        request.timeoutInterval = 300
        let (data, _) = try await URLSession.shared.data(for: request)
        var values: [String: Double] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Stops the server gracefully (SIGTERM) and waits; kills it (SIGKILL) when it has not exited 30 s later.
    ///
    /// - Returns: whether it exited by itself.
    @discardableResult
    func stop() -> Bool {
        guard process.isRunning else { return true }
        process.send(SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(100_000) }
        guard process.isRunning else { return true }
        process.send(SIGKILL)
        _ = process.wait()
        return false
    }
}

struct BenchServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// CPU seconds and memory of a process, read from /proc (Linux).
enum ProcStats {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User and system CPU seconds of process `pid` (`/proc/PID/stat`).
    static func cpu(_ pid: Int32) -> (user: Double, system: Double) {
        cpu(path: "/proc/\(pid)/stat") ?? (0, 0)
    }

    /// CPU seconds by thread name (digits dropped, so that a pool's threads count together) of process `pid`.
    static func cpuByThread(_ pid: Int32) -> [String: Double] {
        let tasks = "/proc/\(pid)/task"
        var byName: [String: Double] = [:]
        for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
            guard let text = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
                let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"),
                let times = cpu(statText: text)
            else { continue }
            let name = threadGroup(String(text[text.index(after: open)..<close]))
            byName[name, default: 0] += times.user + times.system
        }
        return byName
    }

    /// A thread's group, from its name (at most 15 bytes on Linux): the dispatch queues' workers (GCD on Linux names
    /// them after the root queue: the store's and documents' executors, `BlockingWorkExecutor`), NIO's event loops,
    /// or the name without digits.
    private static func threadGroup(_ name: String) -> String {
        if name.contains("qos") || name.hasPrefix("com.apple") { return "dispatch" }
        if name.hasPrefix("NIO-") { return "NIO" }
        return String(name.filter { !$0.isNumber })
    }

    /// User and system CPU seconds of process `root` and its children (a PostgreSQL server and its backends).
    static func treeCPU(_ root: Int32) -> Double {
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { continue }
            let fields = text[text.index(after: close)...].split(separator: " ")
            // fields[1] is the parent (field 4).
            guard pid == root || (fields.count > 1 && Int32(fields[1]) == root),
                let times = cpu(statText: text)
            else { continue }
            total += times.user + times.system
        }
        return total
    }

    /// The peak resident set (`VmHWM`) of process `pid`, in MiB.
    static func peakRSSMiB(_ pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kib / 1024
    }

    private static func cpu(path: String) -> (user: Double, system: Double)? {
        (try? String(contentsOfFile: path, encoding: .utf8)).flatMap { cpu(statText: $0) }
    }

    /// Fields 14 and 15 (utime, stime) of a stat line; the name (field 2) may hold spaces, so count after its `)`.
    private static func cpu(statText text: String) -> (user: Double, system: Double)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3); utime is field 14.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user / ticksPerSecond, system / ticksPerSecond)
    }
}

/// The `q` quantile (0...1) of `values`, nearest rank; 0 when empty.
func quantile(_ values: [Double], _ q: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
