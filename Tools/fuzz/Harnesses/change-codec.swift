// change-codec: the change codec, `Change(decoding:document:)`, on untrusted bytes.
// Oracles: decoding never traps; a change that decodes re-encodes to the same bytes, and its hash is SHA-256 of
// the document's identity and those bytes, the same when the change is rebuilt from its fields.
import FolioCore
import Foundation

enum Harness {
    static let document = FuzzIDs.document(7)

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        guard let change = try? Change(decoding: bytes, document: document) else { return }
        require(change.encoded() == bytes, "a decoded change re-encodes to other bytes")
        require(
            change.hash == ChangeHash(hashing: document.uuid.bytes + bytes),
            "a decoded change's hash is not SHA-256 of its document and bytes")
        let rebuilt = Change(
            document: document, id: change.id, parents: change.parents, vector: change.vector, lamport: change.lamport,
            wallTime: change.wallTime, kind: change.kind, blobs: change.blobs)
        require(
            rebuilt.hash == change.hash && rebuilt.encoded() == bytes,
            "a change rebuilt from its decoded fields differs")
        require(
            rebuilt.kind == change.kind && rebuilt.vector == change.vector && rebuilt.blobs == change.blobs,
            "a rebuilt change's fields differ")
        let encoded = try? EncodedChange(decoding: bytes, document: document)
        require(encoded?.change == change, "EncodedChange decodes otherwise than Change")
        let elsewhere = try? Change(decoding: bytes, document: FuzzIDs.document(8))
        require(elsewhere != nil && elsewhere!.hash != change.hash, "the hash does not bind the change to its document")
    }

    static func seeds() -> [[UInt8]] {
        let history = SampleChanges.history(of: document)
        // After the sample history, changes that list blob references (edits, baselines, a resolution; 1 or 3 each).
        return (history + SampleBlobs.changes(after: history)).map { $0.encoded() }
    }
}
