/// The identity of one device (one installation of an app): the author of changes.
///
/// Within a document, a device numbers its changes 1, 2, 3… (see ``ChangeID``). A device that is cloned or restored
/// from a backup must take a new identity; reusing one is detected as an integrity error.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The sixteen bytes of the identity.
    public let uuid: UUIDBytes

    /// Wraps existing bytes.
    public init(_ uuid: UUIDBytes) {
        self.uuid = uuid
    }

    /// Makes a new identity from `source`.
    public init(using source: some IdentifierSource) {
        self.init(source.next())
    }

    /// Orders by bytes; the tie-break Folio uses after lamport timestamps.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { lhs.uuid < rhs.uuid }

    /// The canonical UUID text.
    public var description: String { uuid.description }
}

/// The identity of one document, the same on every device.
public struct DocumentID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The sixteen bytes of the identity.
    public let uuid: UUIDBytes

    /// Wraps existing bytes.
    public init(_ uuid: UUIDBytes) {
        self.uuid = uuid
    }

    /// Makes a new identity from `source`.
    public init(using source: some IdentifierSource) {
        self.init(source.next())
    }

    /// Orders by bytes.
    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { lhs.uuid < rhs.uuid }

    /// The canonical UUID text.
    public var description: String { uuid.description }
}

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
