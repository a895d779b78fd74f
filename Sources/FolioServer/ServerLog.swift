import FolioCore
import FolioFiles
import FolioStore
import FolioSync
import Foundation

/// A library's log on the server: what the server's sessions read and ingest into.
///
/// This is the server's one seam to its storage. ``SQLiteServerLog`` keeps each library in a SQLite file of its own
/// through FolioStore; another implementation may keep the log elsewhere. Every call is synchronous and may block;
/// the server calls a library's log from one serial executor of its own, never from the network's threads.
public protocol ServerLog: AnyObject, Sendable {
    /// The server's own device in this log (it never authors changes; its identity answers hellos).
    var device: Device { get }
    /// Every document's vector and heads, and the devices known by name, for a session's hello.
    ///
    /// - Throws: when the storage fails.
    func summary() throws -> ServerLogSummary
    /// The changes of `document` that a peer at `since` lacks, in causal order, with the signed heads that vouch
    /// for them.
    ///
    /// - Throws: when the storage fails.
    func changes(of document: DocumentID, since: VersionVector) throws -> (
        changes: [EncodedChange], heads: [SignedHead]
    )
    /// Ingests changes from devices, checked as a device checks them (`ChangeLogStore.ingest(encoded:heads:)`), in
    /// one transaction: all of them or nothing.
    ///
    /// - Throws: when a change or head is refused or the storage fails; nothing is stored then.
    func ingest(_ changes: [EncodedChange], heads: [SignedHead]) throws -> IngestResult
    /// The vector of `document`.
    ///
    /// - Throws: when the storage fails.
    func vector(of document: DocumentID) throws -> VersionVector
    /// Records `device`'s display name and person, replacing the ones it had (an empty person keeps the one it had):
    /// the server calls it only with the name a device gave itself once it proved its key, and the person the server
    /// vouches for (docs/server.md, "People").
    ///
    /// - Throws: when the storage fails.
    func name(_ device: Device) throws
    /// The bytes the log takes in storage, for the library's quota.
    ///
    /// - Throws: when the storage fails.
    func byteSize() throws -> Int
    /// Whether the change `head` of `document` is in the log.
    ///
    /// - Throws: when the storage fails.
    func contains(_ head: ChangeHash, of document: DocumentID) throws -> Bool
    /// The change of `document` with this hash in the log, `nil` if there is none: a parent that a run the server
    /// writes names outside itself.
    ///
    /// - Throws: when the storage fails.
    func change(_ hash: ChangeHash, of document: DocumentID) throws -> Change?
    /// The change of `document` with this identity in the log, `nil` if there is none: a change that a run a
    /// device sent names outside itself.
    ///
    /// - Throws: when the storage fails.
    func change(_ id: ChangeID, of document: DocumentID) throws -> Change?
    /// The changes of `document` that wait in the log (for a dependency or a head), which a run may name too.
    ///
    /// - Throws: when the storage fails.
    func waitingChanges(of document: DocumentID) throws -> [Change]
    /// The blobs of `references` the log holds, by reference.
    ///
    /// - Throws: when the storage fails.
    func blobs(_ references: [BlobReference]) throws -> [BlobReference: Data]
    /// Of `references`, those the log lacks, in order.
    ///
    /// - Throws: when the storage fails.
    func lacking(_ references: [BlobReference]) throws -> [BlobReference]
    /// The blobs changes of the log refer to and the log lacks, ascending, at most `limit`.
    ///
    /// - Throws: when the storage fails.
    func missingBlobs(limit: Int) throws -> [BlobReference]
    /// Of `references`, those a change of one of `documents` refers to (`ChangeLogStore.blobs(_:referencedBy:)`):
    /// the blobs a connection that syncs those documents alone is sent.
    ///
    /// - Throws: when the storage fails.
    func blobs(_ references: [BlobReference], referencedBy documents: [DocumentID]) throws -> Set<BlobReference>
    /// Stores the blobs a change of the log refers to and the log lacks (`ChangeLogStore.storeBlobs(_:)`).
    ///
    /// - Throws: when the storage fails.
    func storeBlobs(_ blobs: [Data]) throws -> BlobIntake
    /// Takes what other server processes stored in the log since this process last read it (a log shared by
    /// several, such as the FolioPostgres module's), and returns the documents that grew with their vectors before.
    ///
    /// - Throws: when the storage fails.
    func catchUp() throws -> [DocumentID: VersionVector]
}

extension ServerLog {
    /// Finds nothing: a log that cannot look changes up has the server write every change as it is (runs name none
    /// outside themselves then).
    public func change(_ hash: ChangeHash, of document: DocumentID) throws -> Change? { nil }
    /// Finds nothing: a log that cannot look changes up refuses runs that name changes before them (1002).
    public func change(_ id: ChangeID, of document: DocumentID) throws -> Change? { nil }
    /// None.
    public func waitingChanges(of document: DocumentID) throws -> [Change] { [] }
    /// None: a log that keeps no blobs answers no asking.
    public func blobs(_ references: [BlobReference]) throws -> [BlobReference: Data] { [:] }
    /// None: a log that keeps no blobs asks for none.
    public func lacking(_ references: [BlobReference]) throws -> [BlobReference] { [] }
    /// None: a log that keeps no blobs asks for none.
    public func missingBlobs(limit: Int) throws -> [BlobReference] { [] }
    /// None: a log that keeps no blobs refers to none.
    public func blobs(_ references: [BlobReference], referencedBy documents: [DocumentID]) throws -> Set<BlobReference>
    { [] }
    /// Nothing: a log only this process writes never grows behind its back.
    public func catchUp() throws -> [DocumentID: VersionVector] { [:] }
    /// Refuses them all.
    public func storeBlobs(_ blobs: [Data]) throws -> BlobIntake {
        var intake = BlobIntake()
        intake.refused = blobs.map(BlobReference.init(to:))
        return intake
    }
}

/// What a hello announces: every document's vector and heads, and the named devices.
public struct ServerLogSummary: Sendable {
    /// Each document's version vector.
    public var vectors: [DocumentID: VersionVector]
    /// Each document's heads.
    public var heads: [DocumentID: [ChangeHash]]
    /// Devices known by name, in identity order.
    public var devices: [Device]

    /// Creates a summary.
    public init(vectors: [DocumentID: VersionVector], heads: [DocumentID: [ChangeHash]], devices: [Device]) {
        self.vectors = vectors
        self.heads = heads
        self.devices = devices
    }
}

/// A library's log in a SQLite file of its own (`ChangeLogStore`, exclusive access: the server is its only user).
public final class SQLiteServerLog: ServerLog {
    /// The store.
    public let store: ChangeLogStore
    private let url: URL

    /// Opens (or creates) the log in `url`; a new log gets a fresh server identity, kept in the file.
    ///
    /// - Throws: ``ServerError`` `storage`.
    public convenience init(at url: URL, durability: Durability = .normal) throws {
        let key: DeviceKey
        do { key = try DeviceRegistry.localIdentity(ofStoreAt: url)?.key ?? DeviceKey() } catch {
            throw ServerError(.storage, "cannot open the library log \(url.path)", cause: error)
        }
        try self.init(at: url, key: key, durability: durability)
    }

    /// Opens (or creates) the log in `url` with the server identity `key` (a log another key made is refused).
    ///
    /// - Throws: ``ServerError`` `storage`.
    public init(at url: URL, key: DeviceKey, durability: Durability = .normal) throws {
        self.url = url
        do {
            store = try ChangeLogStore(
                at: url, key: key, deviceName: "server", durability: durability, access: .exclusive)
            // Changes nobody vouched for are kept a bounded time (`StoreLimits.unvouchedAge`); every ingest drops
            // the expired ones too.
            try store.unvouched.dropExpired()
        } catch {
            throw ServerError(.storage, "cannot open the library log \(url.path)", cause: error)
        }
    }

    /// The server's identity in this log.
    public var device: Device { store.localDevice }

    /// See ``ServerLog/summary()``.
    public func summary() throws -> ServerLogSummary {
        var vectors: [DocumentID: VersionVector] = [:]
        var heads: [DocumentID: [ChangeHash]] = [:]
        for entry in try store.summaries() {
            vectors[entry.document] = entry.vector
            heads[entry.document] = entry.heads
        }
        return ServerLogSummary(
            vectors: vectors, heads: heads,
            devices: try store.devices.all().filter { !$0.name.isEmpty || !$0.person.isEmpty })
    }

    /// See ``ServerLog/changes(of:since:)``.
    public func changes(of document: DocumentID, since: VersionVector) throws -> (
        changes: [EncodedChange], heads: [SignedHead]
    ) {
        let changes = try store.changes(of: document, since: since)
        guard !changes.isEmpty else { return ([], []) }
        return (changes.map(EncodedChange.init), try store.signedHeads(of: document, since: since, signingOwn: false))
    }

    /// See ``ServerLog/ingest(_:heads:)``.
    public func ingest(_ changes: [EncodedChange], heads: [SignedHead]) throws -> IngestResult {
        try store.ingest(encoded: changes, heads: heads)
    }

    /// Takes changes (and the heads that vouch for them) that another log checked already, checking their
    /// structure but not their signatures: a copy of a log kept elsewhere (see `ChangeLogStore`'s
    /// `ingest(trustingEncoded:keeping:)`).
    ///
    /// - Throws: `StoreError`.
    public func ingest(trusting changes: [EncodedChange], keeping heads: [SignedHead]) throws -> IngestResult {
        try store.ingest(trustingEncoded: changes, keeping: heads)
    }

    /// See ``ServerLog/vector(of:)``.
    public func vector(of document: DocumentID) throws -> VersionVector {
        try store.vector(of: document)
    }

    /// See ``ServerLog/name(_:)``.
    public func name(_ device: Device) throws {
        guard device.id != self.device.id else { return }
        var device = device
        if device.person.isEmpty, let known = try store.devices.all().first(where: { $0.id == device.id }) {
            device.person = known.person
        }
        try store.devices.register(device)
    }

    /// See ``ServerLog/byteSize()``: the database file and its write-ahead log.
    public func byteSize() throws -> Int {
        try [url.path, url.path + "-wal"].reduce(0) { total, path in
            guard FileManager.default.fileExists(atPath: path) else { return total }
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber
            return total + (size?.intValue ?? 0)
        }
    }
}

extension SQLiteServerLog {
    /// See ``ServerLog/blobs(_:)``.
    public func blobs(_ references: [BlobReference]) throws -> [BlobReference: Data] {
        try store.blobs(references)
    }

    /// See ``ServerLog/lacking(_:)``.
    public func lacking(_ references: [BlobReference]) throws -> [BlobReference] {
        try store.lacking(references)
    }

    /// See ``ServerLog/missingBlobs(limit:)``.
    public func missingBlobs(limit: Int) throws -> [BlobReference] {
        try store.missingBlobs(limit: limit)
    }

    /// See ``ServerLog/blobs(_:referencedBy:)``.
    public func blobs(_ references: [BlobReference], referencedBy documents: [DocumentID]) throws -> Set<BlobReference>
    {
        try store.blobs(references, referencedBy: documents)
    }

    /// See ``ServerLog/storeBlobs(_:)``.
    public func storeBlobs(_ blobs: [Data]) throws -> BlobIntake {
        try store.storeBlobs(blobs)
    }

    /// See ``ServerLog/contains(_:of:)``.
    public func contains(_ head: ChangeHash, of document: DocumentID) throws -> Bool {
        try store.change(head, of: document) != nil
    }

    /// See `ServerLog.change(_:of:)`, by hash.
    public func change(_ hash: ChangeHash, of document: DocumentID) throws -> Change? {
        try store.change(hash, of: document)
    }

    /// See `ServerLog.change(_:of:)`, by identity.
    public func change(_ id: ChangeID, of document: DocumentID) throws -> Change? {
        try store.change(id, of: document)
    }

    /// See ``ServerLog/waitingChanges(of:)``.
    public func waitingChanges(of document: DocumentID) throws -> [Change] {
        try store.pendingChanges(of: document)
    }
}
