import FolioCore

extension DocumentLibrary {
    /// The identity under which this device records versions made outside Folio (a file changed on disk by another
    /// program): its key is derived from the device's (`DeviceKey.externalKey`), so every run of this device uses
    /// the same one, and it is named after the device ("Mac (another program)").
    public var externalDevice: Device {
        store.key.externalKey.device(named: "\(store.localDevice.name) (another program)")
    }
}
