/// What a device shows others of itself in an open text document: its name, and its selection (a cursor when empty)
/// as positions in the text of the version it saw, named by that version's heads.
///
/// A receiver places the selection in its own text by replaying the version's history with the positions as marks
/// (`Document.presence`): a position stays after the character it followed whatever others typed since. The bytes
/// (``encoded()``) travel in a `SyncFrame.presence` frame: a version byte (1), the name (a varint length and UTF-8),
/// the heads (a varint count and 32 bytes each, ascending), then the anchor and the head of the selection as varints.
public struct PresenceState: Hashable, Sendable {
    /// The most bytes of a name.
    public static let maximumNameBytes = 128
    /// The most heads of a version.
    public static let maximumHeads = 16
    /// The largest position.
    public static let maximumPosition = 1 << 40
    /// The format version written first.
    public static let formatVersion: UInt8 = 1
    /// The most bytes a state encodes to: the version, the longest name, the most heads and the largest positions
    /// (1 + 2 + 128 + 1 + 16 × 32 + 6 + 6). A server must take states of this size (`ServerLimits.presenceBytes`).
    public static let maximumEncodedBytes = 656

    /// The device's name, for display.
    public var name: String
    /// The version the positions are in: its heads, ascending.
    public var heads: [ChangeHash]
    /// Where the selection starts (the end that stays when it is extended), in Unicode scalars of that version's text.
    public var anchor: Int
    /// Where the selection ends (the cursor), in Unicode scalars of that version's text.
    public var head: Int

    /// A state; `heads` are sorted, `name` is cut to ``maximumNameBytes`` bytes of whole characters.
    ///
    /// - Precondition: `heads` holds at most ``maximumHeads`` hashes, and the positions are within
    ///   `0...maximumPosition`.
    public init(name: String, heads: [ChangeHash], anchor: Int, head: Int) {
        precondition(heads.count <= Self.maximumHeads, "a presence names at most \(Self.maximumHeads) heads")
        precondition((0...Self.maximumPosition).contains(anchor) && (0...Self.maximumPosition).contains(head))
        var cut = name
        while cut.utf8.count > Self.maximumNameBytes { cut.removeLast() }
        self.name = cut
        self.heads = heads.sorted()
        self.anchor = anchor
        self.head = head
    }

    /// The state's bytes.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 24 + name.utf8.count + 32 * heads.count)
        writer.write(byte: Self.formatVersion)
        writer.write(string: name)
        writer.write(varint: UInt64(heads.count))
        for hash in heads { writer.write(raw: hash.bytes) }
        writer.write(varint: UInt64(anchor))
        writer.write(varint: UInt64(head))
        return writer.bytes
    }

    /// Decodes untrusted bytes written by ``encoded()``.
    ///
    /// - Throws: `CodecError`: `unsupportedVersion`, `truncated`, `oversized` (a name, a head count or a position
    ///   past its bound), `notCanonical` (heads out of order or repeated), `trailingBytes`.
    public init(decoding bytes: [UInt8]) throws(CodecError) {
        self = try BinaryReader.readingWhole(bytes, "the presence") { reader throws(CodecError) in
            let version = try reader.nextByte("the presence's version")
            guard version == Self.formatVersion else {
                throw CodecError(.unsupportedVersion, "presence version \(version) is not one this build reads", at: 0)
            }
            let name = try reader.nextString("the presence's name", limit: Self.maximumNameBytes)
            let count = try reader.nextCount("the presence's heads", elementSize: 32, limit: Self.maximumHeads)
            var heads: [ChangeHash] = []
            for _ in 0..<count {
                let offset = reader.offset
                let hash = ChangeHash(bytes: try reader.nextRaw(32, "a head of the presence"))
                if let last = heads.last, !(last < hash) {
                    throw CodecError(.notCanonical, "the presence's heads are out of order or repeated", at: offset)
                }
                heads.append(hash)
            }
            func position(_ what: String) throws(CodecError) -> Int {
                let offset = reader.offset
                let value = try reader.nextVarint(what)
                guard value <= UInt64(Self.maximumPosition) else {
                    throw CodecError(.oversized, "\(what), \(value), is past \(Self.maximumPosition)", at: offset)
                }
                return Int(value)
            }
            let anchor = try position("the presence's anchor")
            let head = try position("the presence's head")
            return PresenceState(name: name, heads: heads, anchor: anchor, head: head)
        }
    }
}
