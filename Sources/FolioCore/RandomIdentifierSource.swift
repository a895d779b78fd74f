#if canImport(CUUID)
    import CUUID
#endif
#if canImport(Darwin)
    import Darwin
#endif

/// Random (version 4) UUIDs from the system's libuuid.
public struct RandomIdentifierSource: IdentifierSource {
    /// Creates the source.
    public init() {}

    /// Returns a fresh random UUID.
    public func next() -> UUIDBytes {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBufferPointer { buffer in
            uuid_generate_random(buffer.baseAddress!)
        }
        return UUIDBytes(bytes: bytes)
    }
}
