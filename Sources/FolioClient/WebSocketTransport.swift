import FolioCore
import FolioStore
import FolioSync
import Logging

/// Syncs a store with its library on a Folio server (`folio serve`) over one WebSocket connection: connect, run a
/// session that gives each side what the other lacks, close.
///
/// For a connection that stays open, passes on local commits as they happen and hears of others' at once, use
/// ``LiveSync`` (or `DocumentLibrary.startSyncing(with:token:)`).
public struct WebSocketTransport: SyncTransport {
    /// The library on the server.
    public let endpoint: ServerEndpoint
    /// Which message formats the transport writes: by default it offers formats 3 (changes as compact runs) and 4
    /// (devices with their people) and uses the newest the server writes; `.runs` speaks format 3, and `.plain`
    /// format 2 only, as clients that know no newer one.
    public let formats: SyncDriver.Formats
    /// How long the server may take to accept the connection (name resolution, connection and the WebSocket upgrade)
    /// before the sync fails.
    public let acceptTimeout: Duration
    private let logger: Logger

    /// A transport to `endpoint`.
    public init(
        endpoint: ServerEndpoint, formats: SyncDriver.Formats = .runsWhenOffered,
        acceptTimeout: Duration = .seconds(30), logger: Logger = Logger(label: "folio.client")
    ) {
        self.endpoint = endpoint
        self.formats = formats
        self.acceptTimeout = acceptTimeout
        self.logger = logger
    }

    /// Connects, syncs and closes.
    ///
    /// - Throws: `SyncError` `io` when the connection cannot be made, is not accepted within ``acceptTimeout`` or
    ///   ends before the session finishes (what arrived before is kept), `store` when the store fails.
    public func sync(_ store: ChangeLogStore) async throws -> SyncReport {
        var random = SystemRandomNumberGenerator()
        var connection = ServerConnection(
            endpoint: endpoint, store: store, mode: .once, sessionID: random.next(), logger: logger)
        connection.formats = formats
        connection.acceptTimeout = acceptTimeout
        do {
            return try await connection.run(onEvent: { _ in })
        } catch let ended as ServerConnection.Ended {
            throw SyncError(.io, "syncing with \(endpoint.url) failed: \(ended.description)")
        }
    }
}
