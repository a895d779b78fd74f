extension BinaryReader {
    /// Reads a signed head written by ``BinaryWriter/write(head:)``, checking its numbers, not its signature.
    public mutating func readHead() throws(CodecError) -> SignedHead {
        let document = DocumentID(UUIDBytes(try readBuffer(16, "a signed head's document")))
        let device = DeviceID(UUIDBytes(try readBuffer(16, "a signed head's device")))
        let seqOffset = offset
        let seq = try readVarint("a signed head's sequence number")
        guard seq >= 1, seq <= ChangeLimits.counter else {
            throw CodecError(.invalidValue, "a signed head names sequence number \(seq), outside 1...\(ChangeLimits.counter)", at: seqOffset)
        }
        let hash = ChangeHash(try readBuffer(32, "a signed head's change hash"))
        let publicKey = try DevicePublicKey(bytes: Array(try readBuffer(32, "a signed head's public key")))
        let signature = Array(try readBuffer(64, "a signed head's signature"))
        return SignedHead(
            document: document, change: ChangeID(device: device, seq: seq), hash: hash, publicKey: publicKey, signature: signature)
    }
}
