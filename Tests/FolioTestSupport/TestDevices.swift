import FolioCore
import FolioStore
import Foundation
import Synchronization

/// The keys of the devices tests made, by identity, so that a store can be opened as any of them.
private let knownKeys = Mutex<[DeviceID: DeviceKey]>([:])

extension DeviceKey {
    /// A key that derives deterministically from `name` (through a seeded identifier source): the same name gives
    /// the same device in every test and on every run.
    public static func named(_ name: String) -> DeviceKey {
        var seed: UInt64 = 0x5EED_F011_0000_0001
        for byte in name.utf8 { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3 }
        let key = DeviceKey(using: SeededIdentifierSource(seed: seed))
        knownKeys.withLock { $0[key.id] = key }
        return key
    }

    /// The key of a device that ``named(_:)`` made, whatever name the device shows now.
    public static func known(_ id: DeviceID) -> DeviceKey? {
        knownKeys.withLock { $0[id] }
    }
}

extension Device {
    /// The device of ``DeviceKey/named(_:)``, with `name` as its display name.
    public static func named(_ name: String) -> Device {
        DeviceKey.named(name).device(named: name)
    }
}

extension ChangeLogStore {
    /// Opens the store at `url` as `device`, which ``Device/named(_:)`` made (under any name).
    public convenience init(
        at url: URL, device: Device, clock: any WallClock = SystemClock(), durability: Durability = .normal,
        access: StoreAccess = .shared, limits: StoreLimits = StoreLimits()
    ) throws(StoreError) {
        let key = try Self.key(of: device)
        try self.init(
            at: url, key: key, deviceName: device.name, clock: clock, durability: durability, access: access, limits: limits)
    }

    /// Makes a store in memory as `device`, which ``Device/named(_:)`` made.
    public convenience init(inMemoryNamed name: String, device: Device, clock: any WallClock = SystemClock()) throws(StoreError) {
        try self.init(inMemoryNamed: name, key: try Self.key(of: device), deviceName: device.name, clock: clock)
    }

    private static func key(of device: Device) throws(StoreError) -> DeviceKey {
        guard let key = DeviceKey.known(device.id) else {
            throw StoreError(.database, "test device \(device.id) was not made by Device.named, so its key is unknown")
        }
        return key
    }

    /// Sends this store's changes of `document` that `peer` lacks, with this store's signed heads, as a peer would.
    @discardableResult
    public func send(_ document: DocumentID, to peer: ChangeLogStore) throws(StoreError) -> IngestResult {
        try peer.ingest(changes(of: document, since: peer.vector(of: document)), heads: signedHeads(of: document))
    }
}
