/// Where in decoded bytes a ``CodecError`` was found.
public struct ByteOffset: Hashable, Sendable, CustomStringConvertible {
    /// The offset from the start of the input, in bytes.
    public var offset: Int

    /// Creates a location.
    public init(_ offset: Int) { self.offset = offset }

    /// "byte 12".
    public var description: String { "byte \(offset)" }
}
