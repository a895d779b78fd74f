/// A device's signature over what it says of itself in one sync session (its name and person), bound to the peer's
/// session number: the peer records them only from whoever holds the device's key, and a proof made for one session
/// is worth nothing in another (a server draws each session's number at random). It is bound to the session, not to
/// the peer: a peer the device syncs with could pass the proof on to another peer within that peer's session.
public struct DeviceProof: Hashable, Sendable {
    /// The device's public key, from which its identity derives.
    public let publicKey: DevicePublicKey
    /// The peer's session number the proof answers.
    public let session: UInt64
    /// The Ed25519 signature of ``signedBytes(of:session:)``.
    public let signature: [UInt8]

    /// Signs `device`'s name and person for the peer's session `session` with `key`.
    ///
    /// - Precondition: `key` is `device`'s key.
    public init(signing device: Device, session: UInt64, with key: DeviceKey) {
        precondition(key.id == device.id, "a device proves itself with its own key")
        publicKey = key.publicKey
        self.session = session
        signature = key.signature(for: Self.signedBytes(of: device, session: session))
    }

    /// A proof read from outside, checked by ``holds(for:session:)``.
    public init(publicKey: DevicePublicKey, session: UInt64, signature: [UInt8]) {
        self.publicKey = publicKey
        self.session = session
        self.signature = signature
    }

    /// Whether the proof is `device`'s key's signature of its name and person for the peer's session `session`.
    ///
    /// - Complexity: one SHA-256 and one Ed25519 verification (tens of microseconds).
    public func holds(for device: Device, session: UInt64) -> Bool {
        self.session == session && signature.count == 64 && publicKey.deviceID == device.id
            && publicKey.isValidSignature(signature, for: Self.signedBytes(of: device, session: session))
    }

    /// What the signature covers: a domain label, the device's identity, the session (8 bytes, big-endian), then its
    /// name and its person, each as a varint length and UTF-8.
    public static func signedBytes(of device: Device, session: UInt64) -> [UInt8] {
        var writer = BinaryWriter(capacity: 64 + device.name.utf8.count + device.person.utf8.count)
        writer.write(raw: Array("folio device proof 1\0".utf8))
        device.id.uuid.withUnsafeBytes { writer.write(raw: $0) }
        writer.write(fixed: session)
        writer.write(string: device.name)
        writer.write(string: device.person)
        return writer.bytes
    }
}
