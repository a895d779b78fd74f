import FolioCore
import FolioStore

/// The device names and persons a store knows, so that what a peer passes on is recorded once: never renaming the
/// local device, never replacing a name or a person already known (a device known without a person learns it).
struct DeviceNames: Sendable {
    private var known: [DeviceID: Device]
    private let local: DeviceID
    /// The devices with a name or a person, in identity order, as announced to peers.
    let announced: [Device]

    init(_ store: ChangeLogStore) throws(SyncError) {
        do {
            announced = try store.devices.all().filter { !$0.name.isEmpty || !$0.person.isEmpty }
        } catch {
            throw .store(error, while: "listing the store's devices")
        }
        known = Dictionary(announced.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        local = store.localDevice.id
    }

    /// Records in `store` what `devices` say that it does not know yet: a device's name and person when the device
    /// is new to it, its person when it knew none.
    mutating func learn(_ devices: [Device], into store: ChangeLogStore) throws(SyncError) {
        var new: [DeviceID: Device] = [:]
        for device in devices where device.id != local && (!device.name.isEmpty || !device.person.isEmpty) {
            let current = new[device.id] ?? known[device.id]
            guard let current else {
                new[device.id] = device
                continue
            }
            var learned = current
            if learned.name.isEmpty { learned.name = device.name }
            if learned.person.isEmpty { learned.person = device.person }
            if learned != current { new[device.id] = learned }
        }
        guard !new.isEmpty else { return }
        let recorded = new.values.sorted { $0.id < $1.id }
        do {
            try store.devices.register(recorded)
        } catch {
            throw .store(
                error, while: "recording the names of devices \(recorded.map { "\($0.id)" }.joined(separator: ", "))")
        }
        for device in recorded { known[device.id] = device }
    }
}
