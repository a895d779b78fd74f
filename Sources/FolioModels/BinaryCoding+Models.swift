import FolioCore

/// Limits on what the models' operation decoders accept from untrusted bytes.
enum ModelLimits {
    /// The longest text or byte string in one operation (the change codec's payload limit).
    static let payloadBytes = 512 << 20
    /// The longest record id, field name or image name.
    static let nameBytes = 64 << 10
    /// The most fields one record operation carries.
    static let fields = 1 << 20
}

extension BinaryWriter {
    /// Appends a position or a count as the varint of its two's-complement bit pattern: non-negative values (the
    /// only ones `apply` accepts) take the shortest form, and a negative one still round-trips instead of trapping.
    mutating func write(position: Int) {
        write(varint: UInt64(bitPattern: Int64(position)))
    }
}

extension BinaryReader {
    /// Reads a value written by ``BinaryWriter/write(position:)``.
    ///
    /// - Throws: `CodecError` when the input ends or the varint is malformed.
    mutating func readPosition(_ what: @autoclosure () -> String) throws(CodecError) -> Int {
        Int(truncatingIfNeeded: Int64(bitPattern: try nextVarint(what())))
    }
}
