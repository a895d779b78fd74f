/// Why bytes could not be decoded as a Folio value.
///
/// Decoders of untrusted bytes (from disk or from a peer) throw this instead of trapping; the message names what was
/// wrong and the offset where it was found.
public typealias CodecError = FolioError<CodecErrorCode>

/// The kinds of ``CodecError``; more kinds may be added.
public struct CodecErrorCode: FolioErrorCode {
    /// The input ended inside a value.
    public static let truncated = Self(description: "truncated")
    /// A count or length is larger than the input or than the codec's limits.
    public static let oversized = Self(description: "oversized")
    /// A tag, flag or text is not one the codec knows.
    public static let invalidValue = Self(description: "invalidValue")
    /// The encoding's format version is newer (or older) than this build reads.
    public static let unsupportedVersion = Self(description: "unsupportedVersion")
    /// The value is readable but not in canonical form (unsorted, duplicated or padded), so its hash would be
    /// ambiguous.
    public static let notCanonical = Self(description: "notCanonical")
    /// Bytes are left over after the value.
    public static let trailingBytes = Self(description: "trailingBytes")

    /// An error is located by the byte offset at which the problem was found.
    public typealias Location = ByteOffset

    /// The message, then where: "a count is larger than the input (at byte 12)", then the cause if there is one.
    public static func describe(_ error: CodecError) -> String {
        let located = "\(error.message) (at byte \(error.location.offset))"
        guard let cause = error.cause else { return located }
        return "\(located): \(cause)"
    }

    /// The code's name.
    public let description: String
}

extension CodecError {
    /// Creates an error found at byte `offset` of the input.
    public init(_ code: Code, _ message: String, at offset: Int) {
        self.init(code, message, location: ByteOffset(offset))
    }

    /// The byte offset at which the problem was found.
    public var offset: Int { location.offset }
}
