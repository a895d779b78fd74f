import FolioCore
import FolioStore
import Foundation

/// Wall-clock seconds of `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The median of `values`.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Peak resident memory of this process so far, in MiB.
func peakMemoryMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// This process's resident memory now (`VmRSS`), in MiB; 0 where `/proc` does not say.
func residentMiB() -> Double { procStatusMiB("VmRSS") }

/// This process's peak resident memory since the last ``resetPeakResident()`` (`VmHWM`), in MiB; 0 where `/proc`
/// does not say.
func peakResidentMiB() -> Double { procStatusMiB("VmHWM") }

/// Resets the peak ``peakResidentMiB()`` reports to the memory resident now (Linux: `5` into `clear_refs`).
func resetPeakResident() {
    try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
}

private func procStatusMiB(_ field: String) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let kilobytes =
            line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                Double($0)
            } ?? 0
        return kilobytes / 1024
    }
    return 0
}

/// CPU seconds this process has used so far, user and system.
func cpuSeconds() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// A fresh temporary directory, removed by `cleanUp`.
struct ScratchDirectory {
    let url: URL

    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

/// Size of a store on disk: the database and its WAL and shared-memory files.
func storeBytes(_ url: URL) -> Int {
    ["", "-wal", "-shm"].reduce(0) { total, suffix in
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path + suffix))?[.size] as? Int
        return total + (size ?? 0)
    }
}

/// Prints a two-column table: a title, then one `name  value` row each.
func printTable(_ title: String, _ rows: [(String, String)]) {
    let width = rows.map(\.0.count).max() ?? 0
    print(title)
    print(String(repeating: "-", count: title.count))
    for (name, value) in rows { print(name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
}

/// Prints the final line: one JSON object with sorted keys.
func printJSON(_ values: [String: Any]) {
    let data = try! JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

/// A short description of the machine, for the table.
func machineDescription() -> String {
    let cpu =
        (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
        .split(separator: "\n").first { $0.hasPrefix("model name") }
        .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu)"
}

func format(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }

/// `count`, divided by `FOLIO_BENCH_DIVISOR` when set (for quick local runs; reported figures use the full size).
func benchScale(_ count: Int) -> Int {
    guard let divisor = ProcessInfo.processInfo.environment["FOLIO_BENCH_DIVISOR"].flatMap(Int.init), divisor > 1 else {
        return count
    }
    return max(count / divisor, 1_000)
}
