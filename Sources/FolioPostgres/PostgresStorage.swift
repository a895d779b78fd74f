import FolioServer
import Foundation
import Logging

/// A server's storage in PostgreSQL (`ServerStorage`): accounts in ``PostgresAccounts``, each library's log in a
/// ``PostgresServerLog``, with its copy in the data directory's `cache/`. Any number of server processes, each with
/// a data directory of its own, may share one database.
public final class PostgresStorage: ServerStorage {
    /// The database.
    public let database: PostgresServerDatabase
    /// See `ServerStorage/accounts`.
    public let accounts: any ServerAccounts
    private let cacheDirectory: URL

    /// How often the database is probed for `GET /health`.
    public static let probeInterval: Duration = .seconds(1)

    /// Storage in `database`, with the logs' copies in `dataDirectory`'s `cache/`.
    public init(database: PostgresServerDatabase, dataDirectory: URL) {
        self.database = database
        accounts = PostgresAccounts(database: database)
        cacheDirectory = dataDirectory.appendingPathComponent("cache", isDirectory: true)
        database.probeEvery(Self.probeInterval)
    }

    /// See `ServerStorage/openLog(of:logger:)`.
    public func openLog(of library: String, logger: Logger) throws -> any ServerLog {
        try PostgresServerLog(library: library, database: database, cacheDirectory: cacheDirectory)
    }

    /// See `ServerStorage/watch(_:)`: a connection of the pool listens on the `folio_changes` channel, which every
    /// transaction that stores changes notifies with its library's name; when the connection is lost, another
    /// listens as soon as the database answers, and `stored` is called with `nil` (what was stored meanwhile went
    /// unheard).
    public func watch(_ stored: @escaping @Sendable (String?) -> Void) {
        database.listen(on: "folio_changes") { payload in stored(payload) }
    }

    /// See `ServerStorage/hasLog(of:)`.
    public func hasLog(of library: String) throws -> Bool {
        let logger = database.logger
        return try database.run("looking up library \(library)") { client in
            for try await _ in try await client.query(
                "SELECT 1 FROM folio_log WHERE library = \(library)", logger: logger)
            {
                return true
            }
            return false
        }
    }

    /// See `ServerStorage/unhealthyReason`: the database's (see ``PostgresServerDatabase/unhealthyReason``).
    public var unhealthyReason: String? { database.unhealthyReason.map { "PostgreSQL: \($0)" } }
}
