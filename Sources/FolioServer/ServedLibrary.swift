import FolioCore
import FolioStore
import FolioSync
import Logging

/// One library on the server: its log, the connections of its devices, and the sessions they run.
///
/// Everything here runs on the library's own serial executor, off the network's threads (the log's calls block).
/// Changes from every connection are ingested together: while one batch is written, the next gathers, so that one
/// commit serves many devices. Once a batch is stored, each document that grew is announced to every
/// connection of the library with a notice (the acknowledgement, for the devices that sent it), and the changes the
/// batch stored (never the bytes received: a replay or a forgery stored nothing) are passed on to the other devices,
/// which so learn of them without polling.
///
/// What a member can make the library hold is bounded: bytes of messages in flight per connection and in the
/// server's ``MemoryBudget``, kept sessions and presence states per connection, documents and bytes per library
/// (``ServerLimits``). A device is bound to the library and named only once it proved its key, by writing a change
/// its key signed; its person is recorded only when its hello also proved the key (`SyncHello.proof`). Presence (the
/// devices' cursors) is relayed between connections and never stored (ServedLibrary+Presence.swift).
actor ServedLibrary {
    let name: String
    let log: any ServerLog
    let accounts: any ServerAccounts
    let metrics: ServerMetrics
    let logger: Logger
    let limits: ServerLimits
    let budget: MemoryBudget
    let executor: BlockingWorkExecutor

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A connection's state.
    final class Connection {
        let id: UInt64
        let outbox: Outbox
        let peer: String
        /// The device speaking on this connection, as its latest hello named it.
        var device: Device?
        /// Whether the device proved its key here: a change it wrote, vouched for by a head its key signed, was
        /// stored from this connection, or its hello carried a proof (``provenByKey``). Only then is its name
        /// recorded.
        var proven = false
        /// Whether the device's hello proved its key (`SyncHello.proof`, message format 4): only then is what it says
        /// of its person taken (a change it stored could be another device's, relayed).
        var provenByKey = false
        /// Sessions by channel, and the order they were opened in (the oldest leaves first past the limits).
        var sessions: [UInt64: SyncSession] = [:]
        var opened: [UInt64] = []
        var started: [UInt64: ContinuousClock.Instant] = [:]
        /// The bytes of each kept session's hello, counted in the memory budget until the session is forgotten or
        /// finishes.
        var sessionBytes: [UInt64: Int] = [:]
        /// Finished sessions, kept light (no summaries) to answer requests and repeated `done`s: the peer's session
        /// number by channel.
        var finishedPeers: [UInt64: UInt64] = [:]
        /// The channel changes from other devices are passed on: the latest session's.
        var liveChannel: UInt64?
        /// Session work waiting for the outbox to drain (a catch-up read at the pace the client reads), in order.
        var deferred: [(channel: UInt64, actions: [SyncAction])] = []
        /// Bytes of `changes` messages of this connection waiting for their batch.
        var inFlight = 0
        /// The message format the server writes to this connection: the newest the client said it reads (at the
        /// upgrade, or by writing it), else 2.
        var format: UInt8
        /// The user of the connection's token, when it names one (an app token's): the person recorded for the
        /// device, in place of the one its hello says.
        var person: String?
        /// What the device shows the others of itself through this connection (its cursors), and whether the client
        /// reads the others'.
        var presence: Presence
        /// What the connection's grant lets it sync: the whole library or single documents, each to write or only to
        /// read. A reader's hellos are read as if it held nothing the library lacks (of a document it may only read,
        /// as if it held nothing of it that the library lacks), so that no session asks it for changes it may not
        /// send; documents outside the scope are left out of every hello, answer, push, notice and presence, their
        /// blobs are neither sent nor asked for nor taken, and the names of devices that wrote only them are not
        /// told.
        var scope = SyncScope.library(writes: true)
        /// Whether the connection may write anything: else it is asked for no blob.
        var writes: Bool { scope.writesAny }
        /// Whether the connection's grant is limited to single documents.
        var isScoped: Bool { if case .documents = scope { true } else { false } }
        /// Blobs the device asked for that the log lacked, with the channel it asked on: sent when they arrive.
        /// At most ``ServedLibrary/blobsWantedPerConnection``.
        var blobsWanted: [BlobReference: UInt64] = [:]
        /// Blobs the device asked for that the log holds and that wait to be sent, one message at a time as the
        /// device reads, with the channel it asked on. At most ``ServedLibrary/blobsWantedPerConnection``.
        var blobsOwed: [(reference: BlobReference, channel: UInt64)] = []
        /// By channel, the blobs the server asked the device for (``SyncMessage/wantBlobs(_:)``) that no `blobs`
        /// message has brought or named lacking yet, and the session's `done` held back until none is left: a device
        /// whose session ends has left on the server every blob its changes refer to (or said it lacks them). At
        /// most ``ServedLibrary/blobAskingsHeld`` references a connection; past them, `done` is no longer held.
        var blobAskingsOpen: [UInt64: Set<BlobReference>] = [:]
        var heldDone: [UInt64: SyncMessage] = [:]

        init(id: UInt64, outbox: Outbox, peer: String, format: UInt8, presence: Presence) {
            self.id = id
            self.outbox = outbox
            self.peer = peer
            self.format = format
            self.presence = presence
        }
    }

    /// A `changes` message waiting for the next batch.
    struct Arrival {
        var connection: UInt64
        var channel: UInt64
        var document: DocumentID
        var changes: [EncodedChange]
        var heads: [SignedHead]
        /// The message's size, counted in flight until its batch is stored.
        var bytes: Int
    }

    var connections: [UInt64: Connection] = [:]
    var nextConnection: UInt64 = 0
    var arrivals: [Arrival] = []
    var drainScheduled = false
    /// Passes a presence frame of this library's devices on to the other server processes of the storage, if any.
    let publishPresence: (@Sendable ([UInt8]) -> Void)?
    /// Whether an ``absorbStoredElsewhere()`` is scheduled (other processes stored changes of the library).
    var absorbScheduled = false
    /// Devices known to be bound to this library (saves the account database a query per batch).
    var boundDevices: Set<DeviceID> = []
    /// What a session's hello from the server announces, read from the log once for every hello until a batch
    /// changes it.
    var summary: ServerLogSummary?
    /// The documents of the log (for the quota), read once.
    var documents: Set<DocumentID>?
    /// Devices the log holds by name, counted once.
    var namedDevices: Set<DeviceID>?
    /// The log's size when last read, and the bytes of the messages that arrived since (an upper bound on its
    /// growth, before compression).
    var knownSize: (bytes: Int, at: ContinuousClock.Instant)?
    var bytesSinceSized = 0

    init(
        name: String, log: any ServerLog, accounts: any ServerAccounts, metrics: ServerMetrics, logger: Logger,
        limits: ServerLimits, budget: MemoryBudget,
        publishPresence: (@Sendable ([UInt8]) -> Void)? = nil
    ) {
        self.name = name
        self.publishPresence = publishPresence
        self.log = log
        self.accounts = accounts
        self.metrics = metrics
        self.logger = logger
        self.limits = limits
        self.budget = budget
        executor = BlockingWorkExecutor(label: "folio.library.\(name)")
    }

    /// Registers a connection; its frames go to `outbox`, in message format `format` (the newest the client listed
    /// at the upgrade, 2 by default), and presence frames go to it only when `readsPresence` (the client said so at
    /// the upgrade). `scope` is what its grant lets it sync. `person` is the user of the connection's token, when it
    /// names one: the person recorded for its device, whatever the device says.
    func connect(
        _ outbox: Outbox, peer: String, format: UInt8 = SyncMessage.formatVersion, readsPresence: Bool = false,
        scope: SyncScope = .library(writes: true), person: String? = nil
    ) -> UInt64 {
        nextConnection += 1
        let connection = Connection(
            id: nextConnection, outbox: outbox, peer: peer, format: format,
            presence: Presence(reads: readsPresence, perSecond: limits.presencePerSecond))
        connection.scope = scope
        connection.person = person
        connections[nextConnection] = connection
        return nextConnection
    }

    /// Forgets a connection (after its socket closed). Changes it sent that are waiting are still ingested.
    func disconnect(_ id: UInt64) {
        if let connection = connections[id] { remove(connection) }
    }

    /// Forgets a connection that ended or is being closed: what it kept in the memory budget is given back, and its
    /// device's presence leaves the documents where no other connection of the device shows it.
    func remove(_ connection: Connection) {
        guard connections[connection.id] != nil else { return }
        connections[connection.id] = nil
        release(connection)
        withdrawPresence(of: connection)
    }

    /// Stops counting a connection's kept sessions in the memory budget.
    func release(_ connection: Connection) {
        for channel in connection.opened { budget.release(connection.sessionBytes[channel] ?? 0) }
        connection.sessionBytes = [:]
    }

    /// The number of connections open.
    var connectionCount: Int { connections.count }

    /// Handles one decoded message of `size` bytes in message format `format` that arrived on `channel` of connection
    /// `id`.
    ///
    /// A `changes` message or a run waits here (and so its connection's reader) while the connection has
    /// ``ServerLimits/bytesInFlightPerConnection`` waiting for their batch, or while the server's memory budget is
    /// spent; past ``ServerLimits/stallTimeout`` the connection is closed (1013). A run counts there as the bound on
    /// what it takes decoded, and is decoded against the log, the waiting changes and the connection's changes not
    /// yet stored; one that does not decode closes the connection (1002) and leaves nothing behind.
    func receive(
        _ message: SyncMessage, size: Int, format: UInt8 = SyncMessage.formatVersion, channel: UInt64, from id: UInt64
    ) async {
        guard let connection = connections[id] else { return }
        // What a connection that may only read sends is not taken (its reader closes it before; this holds whoever
        // calls).
        guard connection.writes || !message.isUpload else {
            return refuse(connection, code: 4405, "this token may read the library, not write to it")
        }
        // A change of a document outside the scope, or that the scope only reads, is not taken; nor is a request or
        // an asking for one outside it.
        if let document = message.scopedDocument {
            guard connection.scope.includes(document) else {
                return refuse(
                    connection, code: Self.outsideScopeCode,
                    "document \(document) is not shared with this token")
            }
            guard !message.isUpload || connection.scope.writes(document) else {
                return refuse(connection, code: 4405, "this token may read document \(document), not write to it")
            }
        }
        // A client that writes format 3 or 4 reads it.
        if format > connection.format, SyncMessage.readableFormats.contains(format) { connection.format = format }
        var message = message
        var size = size
        if case .run(let run) = message {
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "a run on channel \(channel) before a hello there")
            }
            guard let context = runContext(run, of: connection) else { return }
            let bound = run.decodedBound(knownDevices: context.knownDevices)
            guard bound <= SyncMessage.Limits.runDecodedBytes else {
                return refuse(
                    connection, code: 1002,
                    "a run of \(run.count) changes may take \(bound) bytes decoded, more than the limit of \(SyncMessage.Limits.runDecodedBytes)"
                )
            }
            size = max(size, bound)
            guard await reserve(size, for: connection) else { return }
            // What the connection sent before may have been stored meanwhile: the context is read again.
            guard let current = runContext(run, of: connection) else { return release(size, of: connection) }
            do {
                let changes = try run.decodedChanges(in: current) { [log] id in try log.change(id, of: run.document) }
                message = .changes(document: run.document, changes: changes, heads: run.heads)
            } catch let error as CodecError {
                release(size, of: connection)
                return refuse(connection, code: 1002, "a run does not decode: \(error)")
            } catch {
                release(size, of: connection)
                return fail(connection, "looking up the changes a run names", error)
            }
            return enqueue(message, size: size, channel: channel, of: connection)
        }
        if case .changes = message {
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "changes on channel \(channel) before a hello there")
            }
            guard await reserve(size, for: connection) else { return }
            return enqueue(message, size: size, channel: channel, of: connection)
        }
        // Whatever else arrives is answered after the changes that came before it are stored.
        drain()
        guard connections[id] != nil else { return }
        switch message {
        case .hello(let hello):
            let greeted = connection.device != nil
            receiveHello(hello, size: size, channel: channel, on: connection)
            // A device that joins sees who is there.
            if !greeted, connection.device != nil, connections[id] != nil { showPresence(to: connection) }
        case .done(let from, let to) where connection.finishedPeers[channel] != nil:
            // A finished session answers a repeated `done` (its answer may have been lost), nothing more.
            guard let session = connection.sessions[channel], to == session.id,
                from == connection.finishedPeers[channel]
            else { return }
            send(.done(from: session.id, to: from), on: channel, to: connection)
        case .request, .done:
            guard var session = connection.sessions[channel] else {
                return refuse(
                    connection, code: 1002, "a \(message.kindName) on channel \(channel) before a hello there")
            }
            let wasFinished = session.isFinished
            let actions = session.receive(message)
            connection.sessions[channel] = session
            perform(actions, on: channel, of: connection)
            if !wasFinished, session.isFinished { finished(channel, of: connection) }
        case .wantBlobs(let references):
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "a wantBlobs on channel \(channel) before a hello there")
            }
            answer(references, on: channel, of: connection)
        case .blobs(let blobs, let lacking):
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "blobs on channel \(channel) before a hello there")
            }
            let references = store(blobs, size: size, from: connection)
            answered(references + lacking, on: channel, of: connection)
        case .changes, .run:
            break
        }
    }

    /// Counts `size` bytes of a `changes` message or a run of `connection` in flight and in the memory budget, once
    /// there is room; false (the connection closed, 1013 past ``ServerLimits/stallTimeout``) when there is none.
    func reserve(_ size: Int, for connection: Connection) async -> Bool {
        let id = connection.id
        guard arrivals.count < limits.waitingMessages else {
            refuse(connection, code: 1013, "the server is overloaded: too many messages wait to be stored")
            return false
        }
        let deadline = ContinuousClock.now + limits.stallTimeout
        // A connection whose socket closed meanwhile waits no more (its queue ended).
        while connection.inFlight > 0, connection.inFlight + size > limits.bytesInFlightPerConnection {
            guard connections[id] != nil, !connection.outbox.hasEnded, !Task.isCancelled else { return false }
            guard ContinuousClock.now < deadline else {
                refuse(connection, code: 1013, "the server is overloaded: the connection's messages wait")
                return false
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        let outbox = connection.outbox
        guard await budget.reserve(size, before: deadline, while: { !outbox.hasEnded }) else {
            if connections[id] != nil, !outbox.hasEnded {
                refuse(connection, code: 1013, "the server is overloaded: its memory budget is spent")
            }
            return false
        }
        guard connections[id] != nil else {
            budget.release(size)
            return false
        }
        connection.inFlight += size
        return true
    }

    /// Gives back what ``reserve(_:for:)`` counted for a message that will not wait for a batch.
    func release(_ size: Int, of connection: Connection) {
        budget.release(size)
        connection.inFlight -= size
    }

    /// Queues a `changes` message whose bytes are counted for the next batch.
    func enqueue(_ message: SyncMessage, size: Int, channel: UInt64, of connection: Connection) {
        guard case .changes(let document, let changes, let heads) = message else { return }
        arrivals.append(
            Arrival(
                connection: connection.id, channel: channel, document: document, changes: changes, heads: heads,
                bytes: size))
        if !drainScheduled {
            drainScheduled = true
            Task { self.drainScheduledBatch() }
        }
    }

    /// Schedules ``absorbStoredElsewhere()``, once however often other processes say they stored changes meanwhile.
    func otherProcessStored() {
        guard !absorbScheduled else { return }
        absorbScheduled = true
        Task { self.absorbStoredElsewhere() }
    }

    /// What a run of `connection` may name besides the log: the waiting changes of its document, and the changes the
    /// connection sent that wait for the next batch. `nil` when the log fails (the connection is then closed).
    func runContext(_ run: ChangeRunMessage, of connection: Connection) -> ChangeRunMessage.Context? {
        var earlier: [ChangeID: ChangeStamp] = [:]
        for arrival in arrivals where arrival.connection == connection.id && arrival.document == run.document {
            for change in arrival.changes { earlier[change.change.id] = ChangeStamp(change.change) }
        }
        do {
            return ChangeRunMessage.Context(
                logDevices: try log.vector(of: run.document).devices, waiting: try log.waitingChanges(of: run.document),
                earlier: earlier)
        } catch {
            fail(connection, "reading what a run may name", error)
            return nil
        }
    }
}

extension ServedLibrary {
    /// The close code of a connection that sent changes of a document, or asked for one, outside what its grant lets
    /// it sync: nothing of it is stored.
    static let outsideScopeCode: UInt16 = 4406
}

extension SyncMessage {
    /// The document a message is about, for those that name one: changes (as `changes` or a run), and requests.
    var scopedDocument: DocumentID? {
        switch self {
        case .changes(let document, _, _): document
        case .run(let run): run.document
        case .request(let document, _): document
        case .hello, .done, .wantBlobs, .blobs: nil
        }
    }

    /// The message's kind, for logs and close reasons.
    var kindName: String {
        switch self {
        case .hello: "hello"
        case .request: "request"
        case .changes: "changes"
        case .run: "run"
        case .done: "done"
        case .wantBlobs: "wantBlobs"
        case .blobs: "blobs"
        }
    }
}
