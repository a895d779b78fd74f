extension BinaryReader {
    /// Reads a signed head written by ``BinaryWriter/write(head:)``, checking its numbers, not its signature.
    ///
    /// - Throws: ``CodecError`` when the bytes are truncated or a number is out of range.
    public mutating func readHead() throws -> SignedHead {
        try nextHead()
    }

    /// The typed core of ``nextHead()``, for the package's decoders.
    package mutating func nextHead() throws(CodecError) -> SignedHead {
        let document = DocumentID(UUIDBytes(try nextBuffer(16, "a signed head's document")))
        let device = DeviceID(UUIDBytes(try nextBuffer(16, "a signed head's device")))
        let seqOffset = offset
        let seq = try nextVarint("a signed head's sequence number")
        guard seq >= 1, seq <= ChangeLimits.counter else {
            throw CodecError(
                .invalidValue, "a signed head names sequence number \(seq), outside 1...\(ChangeLimits.counter)",
                at: seqOffset)
        }
        let hash = ChangeHash(try nextBuffer(32, "a signed head's change hash"))
        let publicKey = try DevicePublicKey(checking: Array(try nextBuffer(32, "a signed head's public key")))
        let signature = Array(try nextBuffer(64, "a signed head's signature"))
        return SignedHead(
            document: document, change: ChangeID(device: device, seq: seq), hash: hash, publicKey: publicKey,
            signature: signature)
    }
}
