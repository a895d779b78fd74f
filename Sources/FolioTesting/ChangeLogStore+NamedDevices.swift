import FolioCore
import FolioStore
import Foundation

extension ChangeLogStore {
    /// Opens the store at `url` as `device`, which ``Device/named(_:)`` made (under any name).
    ///
    /// - Throws: ``StoreError``.
    public convenience init(
        at url: URL, device: Device, clock: any WallClock = SystemClock(), durability: Durability = .normal,
        access: StoreAccess = .shared, limits: StoreLimits = StoreLimits()
    ) throws {
        let key = try Self.key(of: device)
        try self.init(
            at: url, key: key, deviceName: device.name, person: device.person, clock: clock, durability: durability,
            access: access, limits: limits)
    }

    /// Makes a store in memory as `device`, which ``Device/named(_:)`` made.
    ///
    /// - Throws: ``StoreError``.
    public convenience init(inMemoryNamed name: String, device: Device, clock: any WallClock = SystemClock()) throws {
        try self.init(
            inMemoryNamed: name, key: try Self.key(of: device), deviceName: device.name, person: device.person,
            clock: clock)
    }

    private static func key(of device: Device) throws(StoreError) -> DeviceKey {
        guard let key = DeviceKey.known(device.id) else {
            throw StoreError(.database, "test device \(device.id) was not made by Device.named, so its key is unknown")
        }
        return key
    }

    /// Sends this store's changes of `document` that `peer` lacks, with this store's signed heads, as a peer would.
    ///
    /// - Throws: ``StoreError``.
    @discardableResult
    public func send(_ document: DocumentID, to peer: ChangeLogStore) throws -> IngestResult {
        try peer.ingest(changes(of: document, since: peer.vector(of: document)), heads: signedHeads(of: document))
    }
}
