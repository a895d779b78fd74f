import Foundation

/// A change together with its canonical encoding: what arrives from a peer and what the store keeps, so that neither
/// side encodes a change twice.
public struct EncodedChange: Hashable, Sendable {
    /// The change.
    public let change: Change
    /// Its canonical encoding (``Change/encoded()``).
    public let bytes: [UInt8]

    /// Pairs a change with its encoding, encoding it.
    public init(_ change: Change) {
        self.change = change
        bytes = change.encoded()
    }

    /// Decodes untrusted bytes and keeps them.
    ///
    /// - Throws: ``CodecError`` naming what is wrong.
    public init(decoding bytes: [UInt8], document: DocumentID) throws {
        try self.init(checking: bytes, document: document)
    }

    /// The typed core of ``init(decoding:document:)``, for the package's decoders.
    package init(checking bytes: [UInt8], document: DocumentID) throws(CodecError) {
        change = try Change(checking: bytes, document: document)
        self.bytes = bytes
    }

    /// Equal when the changes are.
    public static func == (lhs: EncodedChange, rhs: EncodedChange) -> Bool { lhs.change == rhs.change }

    /// Hashes the change.
    public func hash(into hasher: inout Hasher) { hasher.combine(change) }
}
