import FolioCore

extension Device {
    /// The device of ``DeviceKey/named(_:)``, with `name` as its display name.
    public static func named(_ name: String) -> Device {
        DeviceKey.named(name).device(named: name)
    }
}
