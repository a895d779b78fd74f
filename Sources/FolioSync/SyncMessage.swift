import FolioCore
import Foundation

/// One message of the sync protocol between two peers.
///
/// A session runs in three steps. The initiator says ``hello(_:)`` with a summary of what it has; the responder
/// answers with its own. Then each side pulls what it lacks: a ``request(document:since:)`` per document whose
/// vectors differ, answered by ``changes(document:changes:heads:)`` holding exactly the changes missing from
/// `since`, with the signed heads that vouch for them.
/// Finally the initiator says ``done(from:to:)`` once it holds everything the responder announced, and the
/// responder answers in kind once it holds everything the initiator announced.
///
/// A peer that reads message format 3 may receive the changes as a ``run(_:)`` instead: the same changes in their
/// compact form.
///
/// Messages are self-contained and idempotent: any of them may be delayed, duplicated, reordered or lost (the
/// session retries what it waits for), and their binary form (``encoded()``, ``init(decoding:)``) is deterministic:
/// documents and devices are written in identity order, never in a dictionary's order.
public enum SyncMessage: Hashable, Sendable {
    /// What a peer has: who it is, its session, and its version vector of every document.
    case hello(SyncHello)
    /// Asks for the changes of `document` that a peer at `since` lacks.
    case request(document: DocumentID, since: VersionVector)
    /// Changes of one document, in causal order (a reply to a request; a long reply is split into several), with
    /// the sender's signed head of each device that has changes among them (see `SignedHead`): the receiver
    /// accepts a device's changes only when a head of that device reaches them.
    case changes(document: DocumentID, changes: [EncodedChange], heads: [SignedHead])
    /// Changes of one document in the compact form of a run, with the signed heads that vouch for them (message
    /// format 3 only, sent to a peer that reads it): what a `changes` message carries, decoded by the receiver
    /// against the changes it holds (see ``ChangeRunMessage``).
    case run(ChangeRunMessage)
    /// The sender (session `from`) holds everything the recipient (session `to`) announced in its hello.
    case done(from: UInt64, to: UInt64)
    /// The sender lacks these blobs, which its changes refer to (`Change.blobs`): the recipient answers with
    /// ``blobs(_:lacking:)`` messages that hold those it has and name those it lacks, so that every blob asked for
    /// is answered. At most ``Limits/wantedBlobs`` references, ascending.
    case wantBlobs([BlobReference])
    /// Blobs the recipient asked for, and the blobs it asked for that the sender lacks too. Each blob is checked
    /// against its reference on arrival (by its bytes' hash and size), and stored only when a change of the
    /// recipient's refers to it. The blobs take at most ``Limits/blobMessageBytes`` together.
    case blobs([Data], lacking: [BlobReference])
}

/// The opening message of a session: a peer's identity and a summary of its logs.
public struct SyncHello: Hashable, Sendable {
    /// The device speaking.
    public let device: Device
    /// The speaker's session number, fresh for every session, so that late messages of an earlier session between
    /// the same peers are recognised.
    public let session: UInt64
    /// For the responder's hello, the initiator's session it answers; `nil` in the initiator's.
    public let replyTo: UInt64?
    /// The speaker's version vector of every document it has.
    public let vectors: [DocumentID: VersionVector]
    /// The speaker's heads of every document (sorted hashes): a peer whose vector covers the speaker's checks that
    /// it has these changes, which catches a device identity reused with other changes (equal vectors, other logs).
    public let heads: [DocumentID: [ChangeHash]]
    /// Devices the speaker knows by name (its registry), so the recipient can name the authors of the changes it
    /// receives. Sorted by identity.
    public let devices: [Device]
    /// The speaker's proof that it holds ``device``'s key, over its name and person, for the recipient's session
    /// (message format 4 only; a hello in an earlier format carries none). An initiator sends its hello again with
    /// one once the responder's hello in format 4 told it the session (`SyncDriver`).
    public let proof: DeviceProof?

    /// Creates a hello; `heads` and `devices` are sorted, and documents with an empty vector or no heads left out
    /// of those (an empty entry says nothing), so that equal hellos have equal bytes.
    public init(
        device: Device, session: UInt64, replyTo: UInt64? = nil, vectors: [DocumentID: VersionVector],
        heads: [DocumentID: [ChangeHash]] = [:], devices: [Device] = [], proof: DeviceProof? = nil
    ) {
        self.device = device
        self.session = session
        self.replyTo = replyTo
        self.vectors = vectors.filter { !$0.value.isEmpty }
        self.heads = heads.filter { !$0.value.isEmpty }.mapValues { Array(Set($0)).sorted() }
        self.devices = devices.sorted { $0.id < $1.id }
        self.proof = proof
    }
}

extension SyncMessage: CustomStringConvertible {
    /// A short line for logs and test failures, without the changes' contents.
    public var description: String {
        switch self {
        case .hello(let hello):
            let reply = hello.replyTo.map { " reply to \($0)" } ?? ""
            return
                "hello from \(hello.device.name.isEmpty ? hello.device.id.description : hello.device.name) session \(hello.session)\(reply), \(hello.vectors.count) documents"
        case .request(let document, let since):
            return "request \(document) since \(since)"
        case .changes(let document, let changes, let heads):
            return "changes \(document): " + changes.map(\.change.id.description).joined(separator: ", ")
                + (heads.isEmpty ? "" : "; " + heads.map(\.description).joined(separator: ", "))
        case .run(let run):
            return "run of \(run.count) changes of \(run.document) in \(run.bytes.count) bytes"
                + (run.heads.isEmpty ? "" : "; " + run.heads.map(\.description).joined(separator: ", "))
        case .done(let from, let to):
            return "done from session \(from) to \(to)"
        case .wantBlobs(let references):
            return "want \(references.count) blobs"
        case .blobs(let blobs, let lacking):
            return "\(blobs.count) blobs, \(blobs.reduce(0) { $0 + $1.count }) bytes, \(lacking.count) lacking"
        }
    }
}
