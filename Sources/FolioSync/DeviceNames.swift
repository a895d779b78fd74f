import FolioCore
import FolioStore

/// The device names a store knows, so that names a peer passes on are recorded once (never renaming the local
/// device, never replacing a name already known).
struct DeviceNames: Sendable {
    private var known: [DeviceID: String]
    private let local: DeviceID
    /// The named devices, in identity order, as announced to peers.
    let announced: [Device]

    init(_ store: ChangeLogStore) throws(SyncError) {
        do {
            announced = try store.devices.all().filter { !$0.name.isEmpty }
        } catch {
            throw .store(error, while: "listing the store's devices")
        }
        known = Dictionary(announced.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        local = store.localDevice.id
    }

    /// Records in `store` the devices of `devices` that have a name and are not known yet.
    mutating func learn(_ devices: [Device], into store: ChangeLogStore) throws(SyncError) {
        var new: [Device] = []
        for device in devices.sorted(by: { $0.id < $1.id })
        where !device.name.isEmpty && device.id != local && known[device.id] == nil
            && !new.contains(where: { $0.id == device.id })
        {
            new.append(device)
        }
        guard !new.isEmpty else { return }
        do {
            try store.devices.register(new)
        } catch {
            throw .store(
                error, while: "recording the names of devices \(new.map { "\($0.id)" }.joined(separator: ", "))")
        }
        for device in new { known[device.id] = device.name }
    }
}
