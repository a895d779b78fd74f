import Crypto
import Foundation

/// A device's signing key (Ed25519): the secret that makes a device's changes its own.
///
/// A device's identity is derived from its public key (``DeviceID/init(publicKey:)``), so whoever holds the key is
/// the device and nobody else can be: peers accept a change as device D's only when D's key signed a head that
/// covers it (see ``SignedHead``). Keep the key with the device's data (a store keeps the keys it is opened with); a
/// copy restored from a backup onto a second machine, while the first goes on, must take a new key, or the two sign
/// changes under one identity and their peers report an integrity error.
public struct DeviceKey: Sendable {
    private let privateKey: Curve25519.Signing.PrivateKey
    /// The public half, which peers check signatures with.
    public let publicKey: DevicePublicKey
    /// The identity this key proves: derived from the public key.
    public let id: DeviceID

    /// A new random key.
    public init() {
        self.init(Curve25519.Signing.PrivateKey())
    }

    private init(_ privateKey: Curve25519.Signing.PrivateKey) {
        self.privateKey = privateKey
        publicKey = DevicePublicKey(privateKey.publicKey)
        id = publicKey.deviceID
    }

    /// A key made from the next two identities of `source`: the same source gives the same key on every machine
    /// (for tests and the simulator; a seeded source is no secret).
    public init(using source: some IdentifierSource) {
        var seed = Data(capacity: 32)
        for _ in 0..<2 { source.next().withUnsafeBytes { seed.append(contentsOf: $0) } }
        self.init(seed: seed)
    }

    /// The key whose 32-byte secret is `rawRepresentation` (as ``rawRepresentation`` returns it).
    ///
    /// - Throws: ``CodecError`` `invalidValue` when the bytes are not 32.
    public init(rawRepresentation: Data) throws {
        guard rawRepresentation.count == 32 else {
            throw CodecError(.invalidValue, "a device key has 32 bytes, not \(rawRepresentation.count)", at: 0)
        }
        self.init(seed: rawRepresentation)
    }

    /// Any 32 bytes are an Ed25519 secret.
    private init(seed: Data) {
        do {
            self.init(try Curve25519.Signing.PrivateKey(rawRepresentation: seed))
        } catch {
            preconditionFailure("32 bytes are always an Ed25519 secret: \(error)")
        }
    }

    /// The 32-byte secret; whoever reads it can act as the device.
    public var rawRepresentation: Data { privateKey.rawRepresentation }

    /// The device record for this key, with a display name.
    public func device(named name: String) -> Device { Device(id: id, name: name) }

    /// Another key, derived from this one for `purpose`: the same on every run, unrelated to this key for anyone
    /// who lacks it. A store signs the changes it records for files changed by other programs with such a key.
    public func derivedKey(for purpose: String) -> DeviceKey {
        var material = Data("folio derived key\0\(purpose)\0".utf8)
        material.append(rawRepresentation)
        return DeviceKey(seed: Data(SHA256.hash(data: material)))
    }

    /// The key of the identity under which the device records versions made outside Folio (a file changed on disk
    /// by another program), derived from this one: every run of the device uses the same identity, and only the
    /// device makes changes as it.
    public var externalKey: DeviceKey { derivedKey(for: "external") }

    /// The 64-byte Ed25519 signature of `message`. Sign only bytes that start with a label of their own (as
    /// ``SignedHead/signedBytes`` do), so that a signature made for one purpose cannot pass for another.
    public func signature(for message: [UInt8]) -> [UInt8] {
        do {
            return Array(try privateKey.signature(for: message))
        } catch {
            preconditionFailure("Ed25519 signing cannot fail: \(error)")
        }
    }
}
