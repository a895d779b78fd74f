extension VersionVector {
    /// The canonical binary form: an entry count, then (16-byte device, varint seq) per entry in device order.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 1 + entries.count * 20)
        writer.write(varint: UInt64(entries.count))
        for entry in entries {
            writer.write(fixed: entry.device.uuid.high)
            writer.write(fixed: entry.device.uuid.low)
            writer.write(varint: entry.seq)
        }
        return writer.bytes
    }

    /// Decodes untrusted bytes written by ``encoded()``.
    ///
    /// - Throws: ``CodecError`` when the bytes are truncated, padded, unsorted or followed by more bytes.
    public init(decoding bytes: some Collection<UInt8>) throws {
        let entries = try BinaryReader.readingWhole(Array(bytes), "the vector") { reader throws(CodecError) in
            try Self.readEntries(&reader)
        }
        guard let vector = VersionVector(sortedEntries: entries) else {
            throw CodecError(.notCanonical, "vector entries are unsorted, repeated or zero", at: 0)
        }
        self = vector
    }

    /// Reads the entry count and the entries of an encoded vector, as they stand (the caller checks their order).
    ///
    /// - Throws: ``CodecError`` when the bytes end early, or a count or a sequence number is over its limit.
    static func readEntries(_ reader: inout BinaryReader) throws(CodecError) -> [Entry] {
        let count = try reader.nextCount(
            "the vector's entry count", elementSize: 17, limit: ChangeCodec.Limits.vectorEntries)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let high = try reader.nextFixed("a vector entry's device")
            let low = try reader.nextFixed("a vector entry's device")
            let seqOffset = reader.offset
            let seq = try reader.nextVarint("a vector entry's sequence number")
            guard seq <= ChangeLimits.counter else {
                throw CodecError(
                    .oversized, "vector entry \(seq) is beyond the limit of \(ChangeLimits.counter)", at: seqOffset)
            }
            entries.append(Entry(device: DeviceID(UUIDBytes(high: high, low: low)), seq: seq))
        }
        return entries
    }
}
