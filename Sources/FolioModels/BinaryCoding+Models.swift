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

    /// Appends an insertion of `text` at `position`, as the text models write it: the position, then the text.
    mutating func write(insertion text: String, at position: Int) {
        write(position: position)
        write(string: text)
    }

    /// Appends a deletion of `count` scalars at `position`, as the text models write it: the position, then the
    /// count.
    mutating func write(deletion count: Int, at position: Int) {
        write(position: position)
        write(position: count)
    }
}

extension BinaryReader {
    /// Reads a value written by ``BinaryWriter/write(position:)``.
    ///
    /// - Throws: `CodecError` when the input ends or the varint is malformed.
    mutating func readPosition(_ what: @autoclosure () -> String) throws(CodecError) -> Int {
        Int(truncatingIfNeeded: Int64(bitPattern: try nextVarint(what())))
    }

    /// Reads the tag byte that starts an operation of `model` ("text"), refusing one that is not a `Tag`.
    ///
    /// - Throws: `CodecError` when the input ends, or `invalidValue` for an unknown tag.
    mutating func readOperationTag<Tag: RawRepresentable<UInt8>>(of model: String) throws(CodecError) -> Tag {
        let start = offset
        guard let tag = Tag(rawValue: try nextByte("a \(model) operation's tag")) else {
            throw CodecError(.invalidValue, "unknown \(model) operation tag", at: start)
        }
        return tag
    }

    /// Reads an insertion written by ``BinaryWriter/write(insertion:at:)``.
    ///
    /// - Throws: `CodecError` when the input ends, the varint is malformed, or the text is over its limit or not
    ///   UTF-8.
    mutating func readInsertion() throws(CodecError) -> (at: Int, text: String) {
        let position = try readPosition("an insertion's position")
        return (position, try nextString("an insertion's text", limit: ModelLimits.payloadBytes))
    }

    /// Reads a deletion written by ``BinaryWriter/write(deletion:at:)``.
    ///
    /// - Throws: `CodecError` when the input ends or a varint is malformed.
    mutating func readDeletion() throws(CodecError) -> (at: Int, count: Int) {
        let position = try readPosition("a deletion's position")
        return (position, try readPosition("a deletion's count"))
    }
}
