/// An identity made of one UUID (``DeviceID``, ``DocumentID``): written and read as its canonical UUID text, in
/// `description`, `init?(_:)` and `Codable`, so that an app can keep it anywhere.
public protocol UUIDIdentity: LosslessStringConvertible, Codable {
    /// The sixteen bytes of the identity.
    var uuid: UUIDBytes { get }
    /// Wraps existing bytes.
    init(_ uuid: UUIDBytes)
    /// What the identity names, for error messages ("device", "document").
    static var identityName: String { get }
}

extension UUIDIdentity {
    /// Makes a new identity from `source`.
    public init(using source: some IdentifierSource) {
        self.init(source.next())
    }

    /// The canonical UUID text.
    public var description: String { uuid.description }

    /// Orders by bytes: for devices, the tie-break Folio uses after lamport timestamps.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.uuid < rhs.uuid }

    /// Parses the canonical UUID text that `description` gives, such as `6ba7b810-9dad-11d1-80b4-00c04fd430c8`
    /// (either case); `nil` for anything else.
    public init?(_ description: String) {
        guard let uuid = UUIDBytes(description) else { return nil }
        self.init(uuid)
    }

    /// Decodes the identity from its canonical UUID text.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the text is not a UUID.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = UUIDBytes(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text.prefix(64))' is not a \(Self.identityName) identity (a UUID)")
        }
        self.init(uuid)
    }

    /// Encodes the identity as its canonical UUID text.
    ///
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid.description)
    }
}
