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

    /// Makes a new identity from `source`.
    public init(using source: some IdentifierSource) {
        self.init(source.next())
    }

    /// Orders by bytes.
    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { lhs.uuid < rhs.uuid }

    /// The canonical UUID text.
    public var description: String { uuid.description }
}
