/// A device as people see it: its identity and the name it shows, such as "Anna's iPad"
/// (what NSFileVersion calls the saving computer's name).
public struct Device: Hashable, Sendable {
    /// The device's identity.
    public var id: DeviceID
    /// The display name, free text.
    public var name: String

    /// Creates a device record.
    public init(id: DeviceID, name: String) {
        self.id = id
        self.name = name
    }
}
