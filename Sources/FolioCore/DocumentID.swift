/// The identity of one document, the same on every device.
public struct DocumentID: UUIDIdentity, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The sixteen bytes of the identity.
    public let uuid: UUIDBytes

    /// Wraps existing bytes.
    public init(_ uuid: UUIDBytes) {
        self.uuid = uuid
    }

    /// "document", in error messages.
    public static var identityName: String { "document" }
}
