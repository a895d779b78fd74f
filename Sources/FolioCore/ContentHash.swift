import Crypto
import Foundation

/// The SHA-256 of a blob of contents (a snapshot, a package entry): its name in content-addressed storage.
public struct ContentHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    // Shares ChangeHash's 32-byte representation; the two stay distinct types so one is never passed for the other.
    private let digest: ChangeHash

    /// Wraps 32 bytes.
    ///
    /// - Precondition: `bytes.count == 32`.
    public init<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        digest = ChangeHash(bytes: bytes)
    }

    /// The SHA-256 of `data`.
    public init(hashing data: some DataProtocol) {
        digest = ChangeHash(digest: SHA256.hash(data: data))
    }

    /// The 32 bytes in order.
    public var bytes: [UInt8] { digest.bytes }

    /// The 32 bytes in order.
    public var data: Data { digest.data }

    /// The full lowercase hex text.
    public var hex: String { digest.hex }

    /// The full lowercase hex text.
    public var description: String { digest.hex }

    /// Orders by bytes.
    public static func < (lhs: ContentHash, rhs: ContentHash) -> Bool { lhs.digest < rhs.digest }
}
