/// A device as people see it: its identity, the name it shows, such as "Anna's iPad" (what NSFileVersion calls the
/// saving computer's name), and the person who uses it, when known.
public struct Device: Hashable, Sendable {
    /// The device's identity.
    public var id: DeviceID
    /// The display name, free text.
    public var name: String
    /// The person the device acts for, as the app names them (a user's name or identifier); empty when unknown.
    ///
    /// A device says it itself (`DocumentLibrary(at:deviceName:person:)`); a server that knows the user of a
    /// device's token says it instead, and passes on what it says (docs/server.md, "People").
    public var person: String

    /// Creates a device record.
    public init(id: DeviceID, name: String, person: String = "") {
        self.id = id
        self.name = name
        self.person = person
    }

    /// How reports and copies name the device: `Anna on iPad` when the person is known, else the device's name
    /// (empty when both are).
    public var label: String {
        person.isEmpty ? name : name.isEmpty ? person : "\(person) on \(name)"
    }
}
