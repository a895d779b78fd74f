import FolioCore
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
