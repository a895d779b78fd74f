extension DocumentID: LosslessStringConvertible, Codable {
    /// Parses the canonical UUID text that `description` gives, such as `6ba7b810-9dad-11d1-80b4-00c04fd430c8`
    /// (either case); `nil` for anything else.
    public init?(_ description: String) {
        guard let uuid = UUIDBytes(description) else { return nil }
        self.init(uuid)
    }

    /// Decodes the document's identity from its canonical UUID text.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the text is not a UUID.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = UUIDBytes(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text.prefix(64))' is not a document identity (a UUID)")
        }
        self.init(uuid)
    }

    /// Encodes the document's identity as its canonical UUID text.
    ///
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
