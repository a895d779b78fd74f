import Crypto
import Foundation

/// One event in a document's append-only change log.
///
/// A change names the heads it was made on (`parents`, by hash) and its whole causal context (`vector`, which
/// includes the change itself), so history is both tamper-evident and cheap to compare. Its `hash` is the SHA-256 of
/// the document's identity followed by the change's canonical encoding (see ``encoded()``), so it binds the change to
/// its document, and is computed, never supplied.
public struct Change: Hashable, Sendable, Identifiable {
    /// The document the change belongs to.
    @inlinable public var document: DocumentID { storage.document }
    /// Who made it, and its place in that device's sequence.
    @inlinable public var id: ChangeID { storage.id }
    /// The hashes of the heads the change was made on, in ascending order.
    @inlinable public var parents: [ChangeHash] { storage.parents }
    /// Its causal context: every change it was made after, and itself.
    @inlinable public var vector: VersionVector { storage.vector }
    /// A Lamport timestamp, greater than every parent's: sorting by `(lamport, device)` is a topological order.
    @inlinable public var lamport: UInt64 { storage.lamport }
    /// The device's wall clock when the change was made (for display and latest-wins, never for causality).
    @inlinable public var wallTime: Timestamp { storage.wallTime }
    /// What the change does.
    @inlinable public var kind: ChangeKind { storage.kind }
    /// The blobs the change's operations or contents refer to instead of carrying them, in ascending order (empty
    /// for most changes): a store keeps each once, and sync sends one only to a peer that lacks it.
    @inlinable public var blobs: [BlobReference] { storage.blobs }
    /// SHA-256 of the document's identity and the canonical encoding.
    @inlinable public var hash: ChangeHash { storage.hash }

    /// The fields, held once: a change is immutable, and the log, the caches and a replay pass the same change
    /// around many times, so that a copy is one reference rather than every field and its buffers.
    @usableFromInline let storage: Storage

    @usableFromInline final class Storage: Sendable {
        @usableFromInline let document: DocumentID
        @usableFromInline let id: ChangeID
        @usableFromInline let parents: [ChangeHash]
        @usableFromInline let vector: VersionVector
        @usableFromInline let lamport: UInt64
        @usableFromInline let wallTime: Timestamp
        @usableFromInline let kind: ChangeKind
        @usableFromInline let blobs: [BlobReference]
        @usableFromInline let hash: ChangeHash

        init(
            document: DocumentID, id: ChangeID, parents: [ChangeHash], vector: VersionVector, lamport: UInt64,
            wallTime: Timestamp, kind: ChangeKind, blobs: [BlobReference], hash: ChangeHash
        ) {
            self.document = document
            self.id = id
            self.parents = parents
            self.vector = vector
            self.lamport = lamport
            self.wallTime = wallTime
            self.kind = kind
            self.blobs = blobs
            self.hash = hash
        }
    }

    /// Creates a change and computes its hash. `blobs` lists the blobs `kind`'s operations or contents refer to (see
    /// ``BlobReference``), in any order.
    ///
    /// - Precondition: `vector[id.device] == id.seq`, `lamport >= 1`, and neither `parents` nor `blobs` has
    ///   duplicates.
    public init(
        document: DocumentID, id: ChangeID, parents: [ChangeHash], vector: VersionVector, lamport: UInt64,
        wallTime: Timestamp, kind: ChangeKind, blobs: [BlobReference] = []
    ) {
        var body: [UInt8] = []
        self.init(
            document: document, id: id, parents: parents, vector: vector, lamport: lamport, wallTime: wallTime,
            kind: kind, blobs: blobs, body: &body)
    }

    /// Creates a change and hands back its canonical encoding too, sparing the store a second encoding.
    package init(
        document: DocumentID, id: ChangeID, parents: [ChangeHash], vector: VersionVector, lamport: UInt64,
        wallTime: Timestamp, kind: ChangeKind, blobs: [BlobReference] = [], body: inout [UInt8]
    ) {
        precondition(vector[id.device] == id.seq, "a change's vector must name the change itself: \(id) in \(vector)")
        precondition(lamport >= 1, "lamport timestamps start at 1")
        let sortedParents = parents.sorted()
        precondition(zip(sortedParents, sortedParents.dropFirst()).allSatisfy { $0 < $1 }, "duplicate parent")
        let sortedBlobs = blobs.sorted()
        precondition(zip(sortedBlobs, sortedBlobs.dropFirst()).allSatisfy { $0 < $1 }, "duplicate blob")
        var writer = BinaryWriter(capacity: 96)
        ChangeCodec.encodeBody(
            id: id, parents: sortedParents, vector: vector, lamport: lamport, wallTime: wallTime,
            kind: kind, blobs: sortedBlobs, into: &writer)
        body = writer.bytes
        storage = Storage(
            document: document, id: id, parents: sortedParents, vector: vector, lamport: lamport, wallTime: wallTime,
            kind: kind, blobs: sortedBlobs, hash: ChangeCodec.hash(document: document, body: body))
    }

    /// Used by the decoder, which has already validated the fields and computed the hash.
    init(
        document: DocumentID, id: ChangeID, parents: [ChangeHash], vector: VersionVector, lamport: UInt64,
        wallTime: Timestamp, kind: ChangeKind, blobs: [BlobReference], hash: ChangeHash
    ) {
        storage = Storage(
            document: document, id: id, parents: parents, vector: vector, lamport: lamport, wallTime: wallTime,
            kind: kind, blobs: blobs, hash: hash)
    }

    /// The canonical encoding (without the document's identity, which the hash covers but storage and transport
    /// carry once per document).
    ///
    /// `Change(decoding: change.encoded(), document: change.document) == change` for every change.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter(capacity: 96)
        ChangeCodec.encodeBody(
            id: id, parents: parents, vector: vector, lamport: lamport, wallTime: wallTime,
            kind: kind, blobs: blobs, into: &writer)
        return writer.bytes
    }

    /// Decodes untrusted bytes written by ``encoded()`` and computes the change's hash.
    ///
    /// - Throws: ``CodecError`` naming what is wrong (truncated, oversized, unknown tags, non-canonical order,
    ///   trailing bytes, an unsupported format version).
    public init(decoding bytes: some ContiguousBytes, document: DocumentID) throws {
        try self.init(checking: bytes, document: document)
    }

    /// The typed core of ``init(decoding:document:)``, for the package's decoders.
    package init(checking bytes: some ContiguousBytes, document: DocumentID) throws(CodecError) {
        self = try ChangeCodec.decode(bytes, document: document)
    }

    /// Two changes are equal when their documents and hashes are (the hash covers every field).
    public static func == (lhs: Change, rhs: Change) -> Bool {
        lhs.storage === rhs.storage || (lhs.hash == rhs.hash && lhs.document == rhs.document)
    }

    /// Hashes the change's hash.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
