import Crypto
import Foundation

/// A device's public key: 32 bytes that check its signatures and from which its identity derives.
public struct DevicePublicKey: Hashable, Sendable {
    /// The 32 bytes.
    public let bytes: [UInt8]

    init(_ key: Curve25519.Signing.PublicKey) {
        bytes = Array(key.rawRepresentation)
    }

    /// Wraps 32 bytes read from outside.
    ///
    /// - Throws: ``CodecError`` `invalidValue` when they are not 32.
    public init(bytes: [UInt8]) throws {
        try self.init(checking: bytes)
    }

    /// The typed core of ``init(bytes:)``, for the package's decoders.
    package init(checking bytes: [UInt8]) throws(CodecError) {
        guard bytes.count == 32 else {
            throw CodecError(.invalidValue, "a device's public key has 32 bytes, not \(bytes.count)", at: 0)
        }
        self.bytes = bytes
    }

    /// The identity of the device that holds the matching secret: the first 16 bytes of the SHA-256 of
    /// `folio device\0` and the key. Finding another key with the same identity takes about 2^128 tries.
    public var deviceID: DeviceID {
        var material = Data("folio device\0".utf8)
        material.append(contentsOf: bytes)
        return DeviceID(UUIDBytes(bytes: Array(SHA256.hash(data: material)).prefix(16)))
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`; `false` for bytes that are no key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}
