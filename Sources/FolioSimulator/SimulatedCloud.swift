import FolioCore
import FolioStore
import FolioSync
import FolioTestDoubles
import Foundation

/// The simulated cloud: a peer holding a store (like iCloud's server copy) that devices sync with over a faulty
/// in-memory network. Its store is held in memory: the cloud is not a device, and never crashes.
///
/// A partition splits the cloud: each group of devices syncs with its own replica, a copy of the cloud as it was,
/// so devices in different groups cannot reach each other's changes; healing joins the replicas again.
final class SimulatedCloud {
    let device: Device
    let clock: ManualClock
    /// The scenario's network, between each device and the cloud.
    let network: InMemoryHub
    /// A perfect link, for joining replicas (the cloud's own machinery).
    private let backbone: InMemoryHub
    private(set) var replicas: [ChangeLogStore]
    /// Each device's replica, by device name; absent: replica 0.
    private var groups: [String: Int] = [:]
    private var created = 0

    init(key: DeviceKey, clock: ManualClock, faults: FaultProfile, seed: UInt64) throws {
        device = key.device(named: "cloud")
        self.clock = clock
        network = InMemoryHub(seed: seed, faults: faults, maxTicks: 1_000)
        backbone = InMemoryHub(seed: seed ^ 0x5EED, faults: .reliable)
        replicas = []
        created = 1
        replicas = [try ChangeLogStore(inMemoryNamed: "cloud-1", key: key, deviceName: device.name, clock: clock)]
    }

    /// Whether devices are split into groups.
    var isPartitioned: Bool { replicas.count > 1 }

    /// The replica `device` syncs with.
    func replica(for device: String) -> ChangeLogStore { replicas[groups[device] ?? 0] }

    /// The group number of `device` (0 when not partitioned).
    func group(of device: String) -> Int { groups[device] ?? 0 }

    /// Splits the cloud: each group gets a replica holding what the cloud holds now (a copy of its database).
    /// Devices in no group form one more group (the first replica's).
    func partition(_ named: [[String]]) throws(SyncError) {
        try heal()
        var assignment: [String: Int] = [:]
        for group in named {
            let replica: ChangeLogStore
            created += 1
            do {
                replica = try replicas[0].copyInMemory(named: "cloud-\(created)")
            } catch {
                throw SyncError(.store, "creating a cloud replica", cause: error)
            }
            replicas.append(replica)
            for name in group { assignment[name] = replicas.count - 1 }
        }
        groups = assignment
    }

    /// Joins every replica into the first and ends the partition.
    func heal() throws(SyncError) {
        for replica in replicas.dropFirst() {
            do {
                try backbone.sync(replica, with: replicas[0])
            } catch let error as SyncError {
                throw error
            } catch {
                throw SyncError(.store, "joining the cloud's replicas failed", cause: error)
            }
            try? replica.close()
        }
        replicas = [replicas[0]]
        groups = [:]
    }

    func close() {
        for replica in replicas { try? replica.close() }
    }
}
