/// The identity of one device (one installation of an app): the author of changes.
///
/// Within a document, a device numbers its changes 1, 2, 3… (see ``ChangeID``). A device that is cloned or restored
/// from a backup must take a new identity; reusing one is detected as an integrity error.
public struct DeviceID: UUIDIdentity, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The sixteen bytes of the identity.
    public let uuid: UUIDBytes

    /// Wraps existing bytes.
    public init(_ uuid: UUIDBytes) {
        self.uuid = uuid
    }

    /// "device", in error messages.
    public static var identityName: String { "device" }
}
