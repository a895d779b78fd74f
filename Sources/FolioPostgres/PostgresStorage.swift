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
    /// This process's mark on the presence it publishes and the changes it writes, so that it skips its own.
    private let origin = UUID().uuidString
    /// Presence frames waiting to be published, in order.
    private let outgoing: AsyncStream<String>.Continuation
    /// Which logs' copies may be behind PostgreSQL, from the notifications of `folio_changes` (see ``watch(_:)``).
    private let freshness: LogFreshness

    /// How often the database is probed for `GET /health`.
    public static let probeInterval: Duration = .seconds(1)

    /// Storage in `database`, with the logs' copies in `dataDirectory`'s `cache/`.
    public init(database: PostgresServerDatabase, dataDirectory: URL) {
        self.database = database
        accounts = PostgresAccounts(database: database)
        cacheDirectory = dataDirectory.appendingPathComponent("cache", isDirectory: true)
        freshness = LogFreshness(database: database, channel: Self.changesChannel, origin: origin)
        database.probeEvery(Self.probeInterval)
        let (payloads, outgoing) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingNewest(Self.presenceBuffer))
        self.outgoing = outgoing
        database.notify(on: Self.presenceChannel, payloads)
    }

    deinit { outgoing.finish() }

    /// The channel every write of changes notifies, with the last position it took, the process that wrote and its
    /// library's name (`LogFreshness`).
    static let changesChannel = "folio_changes"
    /// The channel presence crosses processes on.
    static let presenceChannel = "folio_presence"
    /// How many presence frames may wait to be published; past it the oldest are dropped.
    static let presenceBuffer = 1_024
    /// The largest payload a notification carries (PostgreSQL's bound is 8,000 bytes): a larger presence frame stays
    /// in its process. The server's bound on a state (`ServerLimits.presenceBytes`, 1,024 bytes by default) keeps
    /// frames well below it.
    static let presencePayloadLimit = 7_900

    /// See `ServerStorage/publishPresence(_:of:)`: a notification on `folio_presence`, `ORIGIN LIBRARY BASE64`, sent
    /// in order by one task (never blocking the caller; dropped past `presenceBuffer` waiting).
    public func publishPresence(_ frame: [UInt8], of library: String) {
        let payload = "\(origin) \(library) \(Data(frame).base64EncodedString())"
        guard payload.utf8.count <= Self.presencePayloadLimit else { return }
        outgoing.yield(payload)
    }

    /// See `ServerStorage/watchPresence(_:)`.
    public func watchPresence(_ received: @escaping @Sendable (String, [UInt8]) -> Void) {
        let origin = self.origin
        database.listen(on: Self.presenceChannel) { payload in
            guard let payload else { return }
            let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] != origin, AccountNames.isValid(String(parts[1])),
                let frame = Data(base64Encoded: String(parts[2]))
            else { return }
            received(String(parts[1]), Array(frame))
        }
    }

    /// See `ServerStorage/openLog(of:logger:)`.
    public func openLog(of library: String, logger: Logger) throws -> any ServerLog {
        try PostgresServerLog(
            library: library, database: database, cacheDirectory: cacheDirectory, freshness: freshness)
    }

    /// See `ServerStorage/watch(_:)`: a connection of the pool listens on the `folio_changes` channel, which every
    /// write of changes notifies with the last position it took, the process that wrote and its library's name;
    /// `stored` is called with the library's name unless the write was this process's own. When the
    /// connection is lost, another listens as soon as the database answers, and `stored` is called with `nil` (what
    /// was stored meanwhile went unheard). From then on, a log's copy asks PostgreSQL before a read only when it may
    /// have grown there (`LogFreshness`).
    public func watch(_ stored: @escaping @Sendable (String?) -> Void) {
        let freshness = self.freshness
        database.listen(on: Self.changesChannel) { payload in
            guard let payload else {
                freshness.listeningStarted()
                return stored(nil)
            }
            if let library = freshness.heard(payload) { stored(library) }
        }
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

    /// See `ServerStorage/outageCount`: the database's (see ``PostgresServerDatabase/outageCount``).
    public var outageCount: UInt64 { database.outageCount }
}
