extension BinaryWriter {
    /// Appends a signed head (see ``SignedHead/encoded()``).
    public mutating func write(head: SignedHead) {
        head.document.uuid.withUnsafeBytes { write(raw: $0) }
        head.change.device.uuid.withUnsafeBytes { write(raw: $0) }
        write(varint: head.change.seq)
        head.hash.withUnsafeBytes { write(raw: $0) }
        write(raw: head.publicKey.bytes)
        write(raw: head.signature)
    }
}
