import Foundation

/// An editing trace (see Benchmarks/traces/README.md): patches `[position, deleted, inserted]` in Unicode scalars.
struct EditingTrace {
    struct Patch {
        var position: Int
        var deleted: Int
        var inserted: String
    }

    let patches: [Patch]
    let endContent: String

    /// Loads `Benchmarks/traces/NAME.json.gz`, decompressed with gzip.
    init(named name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Benchmarks/traces/\(name).json.gz").standardizedFileURL
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let end = json["endContent"] as? String, let transactions = json["txns"] as? [[String: Any]]
        else { throw BenchError("cannot read the trace at \(url.path)") }
        var patches: [Patch] = []
        for transaction in transactions {
            for case let patch as [Any] in transaction["patches"] as? [Any] ?? [] {
                guard patch.count == 3, let position = patch[0] as? Int, let deleted = patch[1] as? Int,
                    let inserted = patch[2] as? String
                else { throw BenchError("a malformed patch in \(name)") }
                patches.append(Patch(position: position, deleted: deleted, inserted: inserted))
            }
        }
        self.patches = patches
        endContent = end
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
