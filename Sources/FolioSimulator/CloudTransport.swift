import FolioStore
import FolioSync
import FolioTestDoubles
import Synchronization

/// How a simulated device reaches the cloud: an exchange with one replica over the scenario's in-memory network,
/// taken through `DocumentLibrary.sync(through:)` as an app takes its transport, and kept for the run's event log
/// (messages dropped, duplicated or reordered, and whether the exchange completed).
final class CloudTransport: SyncTransport {
    private let network: InMemoryHub
    private let replica: ChangeLogStore
    private let lastExchange = Mutex<InMemoryExchange?>(nil)

    init(network: InMemoryHub, replica: ChangeLogStore) {
        self.network = network
        self.replica = replica
    }

    /// The exchange the last sync made, if it made one.
    var exchange: InMemoryExchange? { lastExchange.withLock { $0 } }

    func sync(_ store: ChangeLogStore) throws -> SyncReport {
        let exchange = try network.sync(store, with: replica)
        lastExchange.withLock { $0 = exchange }
        return exchange.initiator
    }
}
