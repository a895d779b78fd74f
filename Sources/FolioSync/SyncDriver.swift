import FolioCore
import FolioStore

/// The I/O shell around a ``SyncSession``: performs its actions against a `ChangeLogStore` and hands back the
/// encoded messages to send. The transport that carries them (and the timer that calls ``tick()``) is the caller's.
///
/// Everything the driver does to the store is idempotent: a request is answered from the log, and changes are
/// ingested (a duplicate is ignored, an early change waits in the pending table).
public struct SyncDriver: Sendable {
    /// The local store.
    public let store: ChangeLogStore
    /// The protocol state.
    public private(set) var session: SyncSession
    /// What the driver has done so far.
    public internal(set) var report = SyncReport()
    private var names: DeviceNames
    /// Documents whose logs grew, or whose blobs arrived, since ``takeUpdatedDocuments()`` was last called.
    var updatedSinceTaken: Set<DocumentID> = []
    /// The blobs asked of the peer in this session (each is asked once; see `SyncDriver+Blobs.swift`).
    var blobsAsked: Set<BlobReference> = []
    /// Of those, the ones the peer has not answered for yet.
    var blobsAwaited: Set<BlobReference> = []
    /// How many timeouts passed with blobs awaited and no answer.
    var blobAskRetries = 0
    /// Whether an answer for blobs arrived since the last timeout.
    var blobAnswerSinceTick = false
    /// The message format this side writes: ``SyncMessage/formatVersion`` (2) until the peer is known to read
    /// ``SyncMessage/runFormatVersion`` (3) or ``SyncMessage/peopleFormatVersion`` (4).
    public internal(set) var writtenFormat: UInt8
    private let formats: Formats
    /// Whether this session's proof of the local device's key went out (see `proofAnswering(_:format:)`).
    private var proofSent = false

    /// Which message formats a driver writes. Whatever it writes, it reads them all.
    public enum Formats: Hashable, Sendable {
        /// Format 2 only: changes as they are, for a peer that may read nothing else.
        case plain
        /// Format 2 until a message in format 3 or 4 arrives from the peer (which so says it reads it), the newest
        /// format the peer has written from then on: how a client talks to a server it offered formats 3 and 4 to.
        case runsWhenOffered
        /// Format 3 from the start, for a peer known to read it: replies carry changes as runs
        /// (``SyncMessage/run(_:)``).
        case runs
    }

    /// Prepares a session for `store`, summarising its documents' vectors.
    ///
    /// The store's unpublished documents (`UnpublishedDocuments.documents()`, read once here) take no part in
    /// the session: they are not announced, a request for one is answered with nothing, and the peer's changes of
    /// one are neither requested nor ingested (see ``SyncSession/unpublished``).
    ///
    /// - Parameters:
    ///   - store: the local store, which the driver reads and ingests into.
    ///   - role: initiator or responder.
    ///   - id: a session number not used before between these peers.
    ///   - limits: how large a `changes` message may grow.
    ///   - formats: which message formats the driver writes (it reads them all).
    ///   - takesPersonsFromPeer: whether the peer's word on the persons of other devices is taken, replacing what the
    ///     store knew: a server's, which records a device's person only from the device's key or its token's user.
    ///     Otherwise a peer's hello teaches only its own device's person, and only when the store knows none.
    /// - Complexity: O(documents × devices).
    /// - Throws: ``SyncError`` `store` when the store cannot be read.
    public init(
        store: ChangeLogStore, role: SyncSession.Role, id: UInt64, limits: SyncSession.Limits = SyncSession.Limits(),
        formats: Formats = .plain, takesPersonsFromPeer: Bool = false
    ) throws {
        self.store = store
        self.formats = formats
        writtenFormat = formats == .runs ? SyncMessage.runFormatVersion : SyncMessage.formatVersion
        var vectors: [DocumentID: VersionVector] = [:]
        var heads: [DocumentID: [ChangeHash]] = [:]
        let unpublished: Set<DocumentID>
        do {
            unpublished = try store.unpublished.documents()
            for summary in try store.summaries() where !unpublished.contains(summary.document) {
                vectors[summary.document] = summary.vector
                heads[summary.document] = summary.heads
            }
        } catch {
            throw SyncError.store(error, while: "summarising the store for a sync")
        }
        names = try DeviceNames(store, takesPersonsFromPeer: takesPersonsFromPeer)
        session = SyncSession(
            device: store.localDevice, id: id, role: role, vectors: vectors, heads: heads, devices: names.announced,
            limits: limits, unpublished: unpublished)
    }

    /// Whether this side's exchange is over (see ``SyncSession/isFinished``) and the peer answered every asking for
    /// blobs (or stopped being waited for).
    public var isFinished: Bool { session.isFinished && blobsAwaited.isEmpty }

    /// Whether this side waits for the peer to answer an asking for blobs.
    public var awaitsBlobs: Bool { !blobsAwaited.isEmpty }

    /// Opens the exchange. Returns the messages to send.
    ///
    /// - Throws: ``SyncError``.
    public mutating func start() throws -> [[UInt8]] {
        try perform(session.start())
    }

    /// Handles the bytes of one message from the peer. Returns the messages to send.
    ///
    /// Bytes that do not decode are treated as a lost message: counted in ``report`` and otherwise ignored.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails (an integrity error among them), `integrity` when the
    ///   peer's log holds other changes under identities this log uses.
    public mutating func receive(_ bytes: [UInt8]) throws -> [[UInt8]] {
        guard var message = decode(bytes) else { return [] }
        if case .run(let run) = message {
            guard let changes = try decodeRun(run, earlier: [:]) else { return [] }
            message = .changes(document: run.document, changes: changes, heads: run.heads)
        }
        let outgoing = try receive(message)
        return (proofAnswering(message, format: SyncMessage.format(of: bytes)).map { [$0] } ?? []) + outgoing
    }

    /// The initiator's hello again, with only its device and the proof that it holds the device's key
    /// (``SyncHello/proof``), when `message` is the responder's first hello of this session in format 4: the
    /// session's number, which the proof is bound to, has just arrived, and the first hello went out before the
    /// driver knew the peer reads format 4. Sent once a session; `nil` otherwise.
    private mutating func proofAnswering(_ message: SyncMessage, format: UInt8?) -> [UInt8]? {
        guard !proofSent, session.role == .initiator, let format, format >= SyncMessage.peopleFormatVersion,
            writtenFormat >= SyncMessage.peopleFormatVersion, case .hello(let hello) = message,
            hello.replyTo == session.id
        else { return nil }
        proofSent = true
        let device = store.localDevice
        let proven = SyncHello(
            device: device, session: session.id, vectors: [:],
            proof: DeviceProof(signing: device, session: hello.session, with: store.key))
        report.messagesSent += 1
        return SyncMessage.hello(proven).encoded(format: writtenFormat)
    }

    /// Decodes a message's bytes, noting a peer that writes format 3 or 4 (and so reads it); `nil` (counted as rejected)
    /// for bytes that do not decode.
    private mutating func decode(_ bytes: [UInt8]) -> SyncMessage? {
        let message: SyncMessage
        do {
            message = try SyncMessage(decoding: bytes)
        } catch {
            report.messagesRejected += 1
            report.problems.append("a message from the peer was ignored: \(error)")
            return nil
        }
        if formats == .runsWhenOffered, let format = SyncMessage.format(of: bytes), format > writtenFormat {
            writtenFormat = format
        }
        return message
    }

    /// Decodes a run against this store: its log, its waiting changes, and `earlier` (changes that arrived before
    /// the run in the same batch); `nil` (counted as rejected) for a run that does not decode, a run that names a
    /// change this side does not hold among them.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails.
    private mutating func decodeRun(_ run: ChangeRunMessage, earlier: [ChangeID: ChangeStamp]) throws(SyncError)
        -> [EncodedChange]?
    {
        let document = run.document
        let context: ChangeRunMessage.Context
        do {
            context = ChangeRunMessage.Context(
                logDevices: try store.vector(of: document).devices, waiting: try store.pendingChanges(of: document),
                earlier: earlier)
        } catch {
            throw .store(error, while: "reading what the log of document \(document) holds to decode a run")
        }
        do {
            let changes = try run.decodedChanges(in: context) { [store] id in try store.change(id, of: document) }
            report.runsReceived += 1
            return changes
        } catch let error as CodecError {
            report.messagesRejected += 1
            report.problems.append("a run from the peer was ignored: \(error)")
            return nil
        } catch {
            throw .store(error, while: "looking up the changes a run of document \(document) names")
        }
    }

    /// Handles the bytes of several messages from the peer that arrived together, in order. Returns the messages to
    /// send: the same, in the same order, as receiving the messages one after the other would, and the store ends
    /// the same; but the changes of consecutive `changes` messages are ingested in one transaction.
    ///
    /// - Throws: ``SyncError``, as ``receive(_:)-([UInt8])``; when ingesting the changes together fails, they are
    ///   ingested message by message, so that what came before the failure stays, as one by one.
    public mutating func receive(batch: [[UInt8]]) throws -> [[UInt8]] {
        var outgoing: [[UInt8]] = []
        var arrived: [(document: DocumentID, changes: [EncodedChange], heads: [SignedHead])] = []
        for bytes in batch {
            guard SyncMessage.startsAsChanges(bytes) else {
                outgoing += try ingest(arrived)
                arrived = []
                outgoing += try receive(bytes)
                continue
            }
            guard var message = decode(bytes) else { continue }
            if case .run(let run) = message {
                // A run names changes before it: those of the messages before it in the batch too.
                var earlier: [ChangeID: ChangeStamp] = [:]
                for part in arrived where part.document == run.document {
                    for change in part.changes { earlier[change.change.id] = ChangeStamp(change.change) }
                }
                guard let decoded = try decodeRun(run, earlier: earlier) else { continue }
                message = .changes(document: run.document, changes: decoded, heads: run.heads)
            }
            guard case .changes(_, let changes, _) = message else {
                outgoing += try ingest(arrived)
                arrived = []
                outgoing += try receive(message)
                continue
            }
            report.messagesReceived += 1
            report.changesReceived += changes.count
            for action in session.receive(message) {
                if case .ingest(let document, let changes, let heads) = action {
                    arrived.append((document, changes, heads))
                } else {
                    outgoing += try ingest(arrived)
                    arrived = []
                    outgoing += try perform([action])
                }
            }
        }
        outgoing += try ingest(arrived)
        return outgoing
    }

    /// Ingests the changes of several `changes` messages in one transaction, then tells the session each document's
    /// vector in the messages' order. Returns the messages to send.
    private mutating func ingest(
        _ arrived: [(document: DocumentID, changes: [EncodedChange], heads: [SignedHead])]
    ) throws(SyncError) -> [[UInt8]] {
        let oneByOne = arrived.map { SyncAction.ingest(document: $0.document, changes: $0.changes, heads: $0.heads) }
        guard arrived.count > 1 else { return try perform(oneByOne) }
        let result: IngestResult
        do {
            result = try store.ingest(encoded: arrived.flatMap(\.changes), heads: arrived.flatMap(\.heads))
        } catch {
            // Nothing was applied: one transaction per message, as one by one.
            return try perform(oneByOne)
        }
        report.changesApplied += result.applied.count
        report.duplicates += result.duplicates
        for document in result.updatedDocuments {
            report.noteUpdated(document)
            updatedSinceTaken.insert(document)
        }
        var asked: [[UInt8]] = []
        for document in result.updatedDocuments { asked += try askForMissingBlobs(of: document) }
        var actions: [SyncAction] = []
        for document in arrived.map(\.document) {
            let vector: VersionVector
            do {
                vector = try store.vector(of: document)
            } catch {
                throw .store(
                    error, while: "reading the vector of document \(document) after ingesting the peer's changes")
            }
            // The batch's waiting changes are not told apart by document: any of them counts for all.
            actions += session.ingested(document, vector: vector, keptWaiting: result.keptWaiting)
        }
        return try perform(actions) + asked
    }

    /// Handles one decoded message from the peer. Returns the messages to send.
    ///
    /// - Throws: ``SyncError``, as when receiving bytes.
    public mutating func receive(_ message: SyncMessage) throws -> [[UInt8]] {
        report.messagesReceived += 1
        switch message {
        case .changes(_, let changes, _): report.changesReceived += changes.count
        case .run(let run):
            // Bytes decode runs (``receive(_:)-([UInt8])``); a decoded run given here has nothing to hold it against.
            report.messagesRejected += 1
            report.problems.append("a run of \(run.count) changes was handed over undecoded and ignored")
            return []
        case .hello(let hello):
            try names.learn(hello.devices + [hello.device], speaker: hello.device.id, into: store)
        case .wantBlobs(let references): return try answer(references)
        case .blobs(let blobs, let lacking): return try take(blobs, lacking: lacking)
        default: break
        }
        let outgoing = try perform(session.receive(message))
        // Once the peer is known, the blobs this side lacks are asked of it (those earlier sessions left missing).
        if case .hello = message { return outgoing + (try askForMissingBlobs(of: nil)) }
        return outgoing
    }

    /// The documents whose logs grew since the last call (in identity order), for a live connection that tells its
    /// app what arrived as it arrives.
    public mutating func takeUpdatedDocuments() -> [DocumentID] {
        defer { updatedSinceTaken = [] }
        return updatedSinceTaken.sorted()
    }

    /// Leaves `documents` out of the session from now on (``SyncSession/keepToItself(_:)``): a client's answer to a
    /// server's scope, before the server's hello.
    public mutating func keepToItself(_ documents: Set<DocumentID>) {
        session.keepToItself(documents)
    }

    /// The changes of `document` that a peer at `since` lacks, as `changes` messages to send unasked: how a live
    /// connection passes on local commits as they happen. Empty when the peer lacks nothing.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails.
    public mutating func offer(_ document: DocumentID, since: VersionVector) throws -> [[UInt8]] {
        try perform([.fetch(document: document, since: since)])
    }

    /// A request for the changes of `document` this store lacks (since its current vector): how a live connection
    /// asks for what a peer announced outside a session's hello.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails.
    public mutating func request(_ document: DocumentID) throws -> [[UInt8]] {
        let vector: VersionVector
        do { vector = try store.vector(of: document) } catch {
            throw SyncError.store(error, while: "reading the vector of document \(document)")
        }
        return try perform([.send(.request(document: document, since: vector))])
    }

    /// A timeout passed with nothing received. Returns the messages to repeat.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails.
    public mutating func tick() throws -> [[UInt8]] {
        try perform(session.tick()) + askAgainForAwaitedBlobs()
    }

    private mutating func perform(_ actions: [SyncAction]) throws(SyncError) -> [[UInt8]] {
        var queue = actions[...]
        var outgoing: [[UInt8]] = []
        while let action = queue.popFirst() {
            switch action {
            case .send(let message):
                if case .changes(_, let changes, _) = message { report.changesSent += changes.count }
                if case .run(let run) = message {
                    report.changesSent += run.count
                    report.runsSent += 1
                }
                report.messagesSent += 1
                outgoing.append(message.encoded(format: writtenFormat))
            case .fetch(let document, let since):
                let changes: [Change]
                let heads: [SignedHead]
                do {
                    changes = try store.changes(of: document, since: since)
                    // This side's own changes get heads signed per message (below), not the tip's.
                    heads = changes.isEmpty ? [] : try store.signedHeads(of: document, since: since, signingOwn: false)
                } catch {
                    throw .store(error, while: "reading the changes of document \(document) for the peer")
                }
                let store = store
                if writtenFormat >= SyncMessage.runFormatVersion {
                    queue.append(
                        contentsOf: session.fetchedAsRuns(
                            changes.map(EncodedChange.init), heads: heads, signing: { store.signedHead(for: $0) },
                            of: document, since: since, outside: { try? store.change($0, of: document) }))
                } else {
                    queue.append(
                        contentsOf: session.fetched(
                            changes.map(EncodedChange.init), heads: heads, signing: { store.signedHead(for: $0) },
                            of: document))
                }
            case .ingest(let document, let changes, let heads):
                let vector: VersionVector
                let keptWaiting: Bool
                do {
                    let result = try store.ingest(encoded: changes, heads: heads)
                    keptWaiting = result.keptWaiting
                    report.changesApplied += result.applied.count
                    report.duplicates += result.duplicates
                    if !result.applied.isEmpty {
                        report.noteUpdated(document)
                        updatedSinceTaken.insert(document)
                        outgoing += try askForMissingBlobs(of: document)
                    }
                    vector = try store.vector(of: document)
                } catch {
                    throw .store(
                        error, while: "ingesting \(changes.count) changes of document \(document) from the peer")
                }
                queue.append(contentsOf: session.ingested(document, vector: vector, keptWaiting: keptWaiting))
            case .verify(let document, let heads):
                for head in heads {
                    let found: Change?
                    do {
                        found = try store.change(head, of: document)
                    } catch {
                        throw .store(
                            error, while: "looking up the peer's head \(head.shortHex) of document \(document)")
                    }
                    guard found == nil else { continue }
                    throw SyncError(
                        .integrity,
                        "document \(document): the peer's head \(head.shortHex) is not in this log although this log has every change the peer's vector names, so the two logs hold different changes under the same identities (a cloned or restored device reused its identity); nothing was overwritten"
                    )
                }
            }
        }
        report.isComplete = isFinished
        if isFinished, report.caughtUpDocuments.isEmpty, let peer = session.peer {
            report.caughtUpDocuments = peer.vectors.keys.filter { !session.unpublished.contains($0) }.sorted()
        }
        return outgoing
    }
}
