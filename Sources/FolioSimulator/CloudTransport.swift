import FolioStore
import FolioSync
import FolioTestDoubles
import Synchronization

/// How a simulated device reaches the cloud: an exchange with one replica over the scenario's in-memory network,
/// taken through `DocumentLibrary.sync(through:)` as an app takes its transport, and kept for the run's event log
/// (messages dropped, duplicated or reordered, and whether the exchange completed). A library's sync makes a second
/// exchange when its documents settled conflicts with what the first brought.
final class CloudTransport: SyncTransport {
    private let network: InMemoryHub
    private let replica: ChangeLogStore
    private let made = Mutex<[InMemoryExchange]>([])

    init(network: InMemoryHub, replica: ChangeLogStore) {
        self.network = network
        self.replica = replica
    }

    /// The exchanges made through this transport, in order.
    var exchanges: [InMemoryExchange] { made.withLock { $0 } }

    func sync(_ store: ChangeLogStore) throws -> SyncReport {
        let exchange = try network.sync(store, with: replica)
        made.withLock { $0.append(exchange) }
        return exchange.initiator
    }
}
