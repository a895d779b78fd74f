import FolioChildProcess
import FolioCore
import Foundation

/// Runs SQL on a database file outside the store (the test target cannot import GRDB), with the `sqlite3` tool
/// or, when it is missing, Python's `sqlite3` module.
enum SQLiteShell {
    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
        var succeeded: Bool { status == 0 }
    }

    /// Runs `sql` (one or more statements) on the file at `url`.
    @discardableResult
    static func run(_ sql: String, on url: URL) throws -> Outcome {
        let outcome: ChildProcess.Outcome
        if let tool = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/bin/sqlite3"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) {
            outcome = try ChildProcess.run(tool, arguments: ["-bail", url.path, sql])
        } else {
            outcome = try ChildProcess.run(
                "/usr/bin/env",
                arguments: [
                    "python3", "-c",
                    """
                    import sqlite3, sys
                    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                    connection.executescript(sys.argv[2])
                    connection.close()
                    """,
                    url.path, sql,
                ])
        }
        return Outcome(status: outcome.status, output: outcome.outputText, errors: outcome.errorText)
    }

    /// Runs a Python script with `arguments` (for what the `sqlite3` tool cannot do, such as dying mid-transaction).
    @discardableResult
    static func python(_ script: String, arguments: [String]) throws -> Outcome {
        let outcome = try ChildProcess.run("/usr/bin/env", arguments: ["python3", "-c", script] + arguments)
        return Outcome(status: outcome.status, output: outcome.outputText, errors: outcome.errorText)
    }

    /// `X'…'`: a blob literal.
    static func blobLiteral(_ bytes: some Sequence<UInt8>) -> String {
        "X'" + bytes.map { String(format: "%02X", $0) }.joined() + "'"
    }

    /// The body of `change` with the last byte of `text`, which its operations hold, replaced by `replacement`;
    /// `nil` when the body does not hold `text`.
    static func body(of change: Change, replacingLastByteOf text: String, with replacement: Character) -> [UInt8]? {
        var body = change.encoded()
        let bytes = Array(text.utf8)
        guard let offset = body.indices.first(where: { body[$0...].starts(with: bytes) }) else { return nil }
        body[offset + bytes.count - 1] = replacement.asciiValue!
        return body
    }

    /// The condition that picks `change`'s row of the change table.
    static func rowCondition(_ change: Change) -> String {
        "device = (SELECT id FROM device WHERE uuid = \(blobLiteral(change.id.device.uuid.bytes))) AND seq = \(change.id.seq)"
    }
}
