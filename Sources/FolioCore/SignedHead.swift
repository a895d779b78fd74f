/// A device's signed statement that one of its changes is its latest in a document: "my change `seq` of this
/// document has hash `hash`".
///
/// A change's hash covers its parents' hashes, so a head vouches for every change of its device in the head's
/// causal past: a receiver accepts device D's changes only when a head signed by D reaches them through parent
/// hashes (see `ChangeLogStore.ingest(encoded:heads:)`). Devices sign a head per document when they send their
/// changes, not every change, so signatures cost one Ed25519 signature per document and export, and nothing in the
/// change log's bytes. A head carries its signer's public key: the key must derive the head's device identity
/// (``DevicePublicKey/deviceID``), so a head is checked with nothing but itself.
public struct SignedHead: Hashable, Sendable, CustomStringConvertible {
    /// The document.
    public let document: DocumentID
    /// The change the head names: its device (the signer) and sequence number.
    public let change: ChangeID
    /// The change's hash.
    public let hash: ChangeHash
    /// The signer's public key.
    public let publicKey: DevicePublicKey
    /// The Ed25519 signature of ``signedBytes``.
    public let signature: [UInt8]

    /// Signs `change`'s identity and hash with `key`.
    ///
    /// - Precondition: `change` is the key's device's (`change.id.device == key.id`).
    public init(signing change: Change, with key: DeviceKey) {
        self.init(document: change.document, change: change.id, hash: change.hash, signedWith: key)
    }

    /// Signs the change of `document` with identity `change` and hash `hash` with `key`.
    ///
    /// - Precondition: the change is the key's device's (`change.device == key.id`).
    public init(document: DocumentID, change: ChangeID, hash: ChangeHash, signedWith key: DeviceKey) {
        precondition(change.device == key.id, "a device signs only its own changes")
        self.document = document
        self.change = change
        self.hash = hash
        publicKey = key.publicKey
        signature = key.signature(for: Self.signedBytes(document: document, change: change, hash: hash))
    }

    /// A head read from outside, not yet checked (see ``isAuthentic``).
    public init(
        document: DocumentID, change: ChangeID, hash: ChangeHash, publicKey: DevicePublicKey, signature: [UInt8]
    ) {
        self.document = document
        self.change = change
        self.hash = hash
        self.publicKey = publicKey
        self.signature = signature
    }

    /// Whether the head is what its device signed: the public key derives the device's identity, and the signature
    /// is that key's over the head.
    ///
    /// - Complexity: one SHA-256 and one Ed25519 verification (tens of microseconds).
    public var isAuthentic: Bool {
        signature.count == 64 && publicKey.deviceID == change.device
            && publicKey.isValidSignature(signature, for: signedBytes)
    }

    /// What the signature covers: a domain label, the document, the device, the sequence number (8 bytes,
    /// big-endian) and the hash.
    public var signedBytes: [UInt8] { Self.signedBytes(document: document, change: change, hash: hash) }

    private static func signedBytes(document: DocumentID, change: ChangeID, hash: ChangeHash) -> [UInt8] {
        var writer = BinaryWriter(capacity: 96)
        writer.write(raw: Array("folio signed head 1\0".utf8))
        document.uuid.withUnsafeBytes { writer.write(raw: $0) }
        change.device.uuid.withUnsafeBytes { writer.write(raw: $0) }
        writer.write(fixed: change.seq)
        hash.withUnsafeBytes { writer.write(raw: $0) }
        return writer.bytes
    }

    /// Of `heads` (one device's, of one document), the one a sender puts beside that device's changes
    /// `first...last` of a message: the highest whose change is among them (it vouches for them at once, and for
    /// those above it as soon as the next message's head arrives); else the lowest above them (it vouches for them
    /// when its change arrives); else the highest. `nil` when `heads` is empty.
    public static func reaching(_ first: UInt64, _ last: UInt64, among heads: [SignedHead]) -> SignedHead? {
        heads.filter { (first...max(first, last)).contains($0.change.seq) }.max { $0.change.seq < $1.change.seq }
            ?? heads.filter { $0.change.seq > last }.min { $0.change.seq < $1.change.seq }
            ?? heads.max { $0.change.seq < $1.change.seq }
    }

    /// `device#seq` and the hash, for messages.
    public var description: String { "head \(change) \(hash.shortHex)" }

    /// The size of ``encoded()``'s output at most.
    public static let maximumEncodedSize = 16 + 16 + 9 + 32 + 32 + 64
}

extension SignedHead {
    /// The binary form: document, device, seq (varint), hash, public key and signature.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: Self.maximumEncodedSize)
        writer.write(head: self)
        return writer.bytes
    }

    /// Decodes bytes written by ``encoded()``, checking their shape (not the signature: see ``isAuthentic``).
    ///
    /// - Throws: ``CodecError`` `truncated`, `invalidValue` (a seq of 0 or above ``ChangeLimits/counter``) or
    ///   `trailingBytes`.
    public init(decoding bytes: [UInt8]) throws {
        self = try BinaryReader.readingWhole(bytes, "the signed head") { reader throws(CodecError) in
            try reader.nextHead()
        }
    }
}
