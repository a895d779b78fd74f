/// Why bytes could not be decoded as a Folio value.
///
/// Decoders of untrusted bytes (from disk or from a peer) throw this instead of trapping; the message names what was
/// wrong and the offset where it was found.
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case truncated, oversized, invalidValue, unsupportedVersion, notCanonical, trailingBytes
        }
        private let value: Value

        /// The input ended inside a value.
        public static let truncated = Code(value: .truncated)
        /// A count or length is larger than the input or than the codec's limits.
        public static let oversized = Code(value: .oversized)
        /// A tag, flag or text is not one the codec knows.
        public static let invalidValue = Code(value: .invalidValue)
        /// The encoding's format version is newer (or older) than this build reads.
        public static let unsupportedVersion = Code(value: .unsupportedVersion)
        /// The value is readable but not in canonical form (unsorted, duplicated or padded), so its hash would be
        /// ambiguous.
        public static let notCanonical = Code(value: .notCanonical)
        /// Bytes are left over after the value.
        public static let trailingBytes = Code(value: .trailingBytes)

        /// The code's name.
        public var description: String { "\(value)" }
    }

    /// The kind of problem.
    public var code: Code
    /// What was wrong, in words.
    public var message: String
    /// The byte offset at which the problem was found.
    public var offset: Int

    /// Creates an error.
    public init(_ code: Code, _ message: String, at offset: Int) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    /// One sentence: the message and where.
    public var description: String { "\(message) (at byte \(offset))" }
}
