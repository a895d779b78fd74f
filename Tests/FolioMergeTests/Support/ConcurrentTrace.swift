import FolioMerge
import Foundation

/// A recorded concurrent editing history (see `Benchmarks/traces/README.md`: from josephg/editing-traces, CC BY 4.0):
/// transactions by agents, each typed on the merged result of its parents.
struct ConcurrentTrace {
    struct Transaction {
        var agent: Int
        var parents: [Int]
        /// The patches as edits: each `[position, deleted, inserted]` is a delete then an insert at `position`.
        var edits: [TextEdit]
    }

    var startContent: String
    var endContent: String
    var transactions: [Transaction]

    struct LoadError: Error, CustomStringConvertible {
        var description: String
    }

    /// `Benchmarks/traces/NAME`, decompressed with `gzip -dc` and parsed.
    static func load(named name: String) throws -> ConcurrentTrace {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // FolioMergeTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // the package
            .appendingPathComponent("Benchmarks/traces/\(name)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let json = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let root = try JSONSerialization.jsonObject(with: json) as? [String: Any],
            let end = root["endContent"] as? String, let txns = root["txns"] as? [[String: Any]]
        else {
            throw LoadError(description: "\(path) is not a concurrent editing trace")
        }
        var transactions: [Transaction] = []
        for txn in txns {
            guard let agent = txn["agent"] as? Int, let parents = txn["parents"] as? [Int],
                let patches = txn["patches"] as? [[Any]]
            else {
                throw LoadError(description: "transaction \(transactions.count) of \(path) is malformed")
            }
            var edits: [TextEdit] = []
            for patch in patches {
                guard patch.count == 3, let position = patch[0] as? Int, let deleted = patch[1] as? Int,
                    let inserted = patch[2] as? String
                else {
                    throw LoadError(description: "a patch of transaction \(transactions.count) is malformed")
                }
                if deleted > 0 { edits.append(.delete(at: position, count: deleted)) }
                if !inserted.isEmpty { edits.append(.insert(at: position, text: inserted)) }
            }
            transactions.append(Transaction(agent: agent, parents: parents, edits: edits))
        }
        return ConcurrentTrace(
            startContent: root["startContent"] as? String ?? "", endContent: end, transactions: transactions)
    }
}
