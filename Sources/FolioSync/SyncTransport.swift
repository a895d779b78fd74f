import FolioStore

/// A way for a store to sync with others: a shared folder of files (``FolderTransport``), a `folio serve` server
/// (FolioClient's `WebSocketTransport`), or a peer over FolioTesting's in-memory network (`InMemoryTransport`).
///
/// A call brings the store up to date with what the other side has, and gives the other side what the store has
/// (as far as the transport allows: a folder is read by the others when they sync). Changes are only ever ingested,
/// so a sync that fails half-way leaves every log correct; syncing again finishes the job.
public protocol SyncTransport: Sendable {
    /// Syncs `store` through this transport.
    ///
    /// - Throws: ``SyncError`` when the store or the transport's I/O fails.
    func sync(_ store: ChangeLogStore) async throws -> SyncReport
}
