import FolioStore
import FolioSync

/// Syncs stores with one peer store (the cloud's, typically) over an ``InMemoryHub``.
public struct InMemoryTransport: SyncTransport {
    /// The network.
    public let hub: InMemoryHub
    /// The store on the other side.
    public let peer: ChangeLogStore

    /// Creates a transport to `peer` over `hub`.
    public init(hub: InMemoryHub, peer: ChangeLogStore) {
        self.hub = hub
        self.peer = peer
    }

    /// Runs one exchange with the peer, `store` initiating. Returns `store`'s side of it.
    ///
    /// - Throws: ``SyncError`` `store` when either store fails.
    public func sync(_ store: ChangeLogStore) throws -> SyncReport {
        try hub.sync(store, with: peer).initiator
    }
}
