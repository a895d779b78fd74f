import FolioCore
import FolioStore

/// The device names and persons a store knows, so that what a peer passes on is recorded once: never renaming the
/// local device, never replacing a name already known.
///
/// A person is taken from the peer that says it according to the trust the driver was given: a server's word
/// (`takesPersonsFromPeer`) on any device replaces what the store knew, since a server records a device's person
/// only from the device's key or its token's user; any other peer teaches only its own device's person, and only
/// when the store knows none (it could say anything of the others).
struct DeviceNames: Sendable {
    private var known: [DeviceID: Device]
    private let local: DeviceID
    private let takesPersonsFromPeer: Bool
    /// The devices with a name or a person, in identity order, as announced to peers.
    let announced: [Device]

    init(_ store: ChangeLogStore, takesPersonsFromPeer: Bool = false) throws(SyncError) {
        do {
            announced = try store.devices.all().filter { !$0.name.isEmpty || !$0.person.isEmpty }
        } catch {
            throw .store(error, while: "listing the store's devices")
        }
        known = Dictionary(announced.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        local = store.localDevice.id
        self.takesPersonsFromPeer = takesPersonsFromPeer
    }

    /// Records in `store` what `devices`, as the peer whose device is `speaker` says them, teach it: a device's name
    /// when the device is new to the store or nameless in it, and a person as the type's description says.
    mutating func learn(_ devices: [Device], speaker: DeviceID, into store: ChangeLogStore) throws(SyncError) {
        var new: [DeviceID: Device] = [:]
        for device in devices where device.id != local && (!device.name.isEmpty || !device.person.isEmpty) {
            let current = new[device.id] ?? known[device.id] ?? Device(id: device.id, name: "")
            var learned = current
            if learned.name.isEmpty { learned.name = device.name }
            if takesPersonsFromPeer {
                if !device.person.isEmpty { learned.person = device.person }
            } else if device.id == speaker, learned.person.isEmpty {
                learned.person = device.person
            }
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
