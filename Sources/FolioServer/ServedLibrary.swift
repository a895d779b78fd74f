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
/// server's ``MemoryBudget``, kept sessions per connection, documents and bytes per library (``ServerLimits``). A
/// device is bound to the library and named only once it proved its key, by writing a change its key signed.
actor ServedLibrary {
    let name: String
    private let log: any ServerLog
    private let accounts: AccountStore
    private let metrics: ServerMetrics
    private let logger: Logger
    private let limits: ServerLimits
    private let budget: MemoryBudget
    private let executor: BlockingWorkExecutor
    private var random: SplitMix64

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A connection's state.
    private final class Connection {
        let id: UInt64
        let outbox: Outbox
        let peer: String
        /// The device speaking on this connection, as its latest hello named it.
        var device: Device?
        /// Whether the device proved its key here: a change it wrote, vouched for by a head its key signed, was
        /// stored from this connection. Only then is its name recorded.
        var proven = false
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

        init(id: UInt64, outbox: Outbox, peer: String) {
            self.id = id
            self.outbox = outbox
            self.peer = peer
        }
    }

    /// A `changes` message waiting for the next batch.
    private struct Arrival {
        var connection: UInt64
        var channel: UInt64
        var document: DocumentID
        var changes: [EncodedChange]
        var heads: [SignedHead]
        /// The message's size, counted in flight until its batch is stored.
        var bytes: Int
    }

    private var connections: [UInt64: Connection] = [:]
    private var nextConnection: UInt64 = 0
    private var arrivals: [Arrival] = []
    private var drainScheduled = false
    /// Devices known to be bound to this library (saves the account database a query per batch).
    private var boundDevices: Set<DeviceID> = []
    /// What a session's hello from the server announces, read from the log once for every hello until a batch
    /// changes it.
    private var summary: ServerLogSummary?
    /// The documents of the log (for the quota), read once.
    private var documents: Set<DocumentID>?
    /// Devices the log holds by name, counted once.
    private var namedDevices: Set<DeviceID>?
    /// The log's size when last read, and the bytes of the messages that arrived since (an upper bound on its
    /// growth, before compression).
    private var knownSize: (bytes: Int, at: ContinuousClock.Instant)?
    private var bytesSinceSized = 0

    init(
        name: String, log: any ServerLog, accounts: AccountStore, metrics: ServerMetrics, logger: Logger,
        limits: ServerLimits, budget: MemoryBudget, seed: UInt64
    ) {
        self.name = name
        self.log = log
        self.accounts = accounts
        self.metrics = metrics
        self.logger = logger
        self.limits = limits
        self.budget = budget
        self.random = SplitMix64(seed: seed)
        executor = BlockingWorkExecutor(label: "folio.library.\(name)")
    }

    /// Registers a connection; its frames go to `outbox`.
    func connect(_ outbox: Outbox, peer: String) -> UInt64 {
        nextConnection += 1
        connections[nextConnection] = Connection(id: nextConnection, outbox: outbox, peer: peer)
        return nextConnection
    }

    /// Forgets a connection (after its socket closed). Changes it sent that are waiting are still ingested.
    func disconnect(_ id: UInt64) {
        if let connection = connections[id] { release(connection) }
        connections[id] = nil
    }

    /// Stops counting a connection's kept sessions in the memory budget.
    private func release(_ connection: Connection) {
        for channel in connection.opened { budget.release(connection.sessionBytes[channel] ?? 0) }
        connection.sessionBytes = [:]
    }

    /// The number of connections open.
    var connectionCount: Int { connections.count }

    /// Handles one decoded message of `size` bytes that arrived on `channel` of connection `id`.
    ///
    /// A `changes` message waits here (and so its connection's reader) while the connection has
    /// ``ServerLimits/bytesInFlightPerConnection`` waiting for their batch, or while the server's memory budget is
    /// spent; past ``ServerLimits/stallTimeout`` the connection is closed (1013).
    func receive(_ message: SyncMessage, size: Int, channel: UInt64, from id: UInt64) async {
        guard let connection = connections[id] else { return }
        if case .changes(let document, let changes, let heads) = message {
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "changes on channel \(channel) before a hello there")
            }
            guard arrivals.count < limits.waitingMessages else {
                return refuse(connection, code: 1013, "the server is overloaded: too many messages wait to be stored")
            }
            let deadline = ContinuousClock.now + limits.stallTimeout
            while connection.inFlight > 0, connection.inFlight + size > limits.bytesInFlightPerConnection {
                guard connections[id] != nil else { return }
                guard ContinuousClock.now < deadline else {
                    return refuse(connection, code: 1013, "the server is overloaded: the connection's messages wait")
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            guard await budget.reserve(size, before: deadline) else {
                guard connections[id] != nil else { return }
                return refuse(connection, code: 1013, "the server is overloaded: its memory budget is spent")
            }
            guard connections[id] != nil else { return budget.release(size) }
            connection.inFlight += size
            arrivals.append(
                Arrival(
                    connection: id, channel: channel, document: document, changes: changes, heads: heads,
                    bytes: size))
            if !drainScheduled {
                drainScheduled = true
                Task { self.drainScheduledBatch() }
            }
            return
        }
        // Whatever else arrives is answered after the changes that came before it are stored.
        drain()
        guard connections[id] != nil else { return }
        switch message {
        case .hello(let hello):
            receiveHello(hello, size: size, channel: channel, on: connection)
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
        case .changes:
            break
        }
    }

    private func receiveHello(_ hello: SyncHello, size: Int, channel: UInt64, on connection: Connection) {
        guard hello.replyTo == nil else {
            return refuse(connection, code: 1002, "a client's hello must not answer a session")
        }
        guard hello.vectors.count <= limits.documentsPerLibrary else {
            return refuse(
                connection, code: 1008,
                "the hello announces \(hello.vectors.count) documents; a library holds at most \(limits.documentsPerLibrary)"
            )
        }
        if let device = connection.device {
            guard device.id == hello.device.id else {
                return refuse(connection, code: 1008, "one connection speaks for one device (\(device.id))")
            }
            if device.name != hello.device.name {
                connection.device = hello.device
                if connection.proven { recordName(of: hello.device, provenOn: connection) }
            }
        } else {
            // Nothing is bound at a hello (anyone may name any device there); a device bound to another library
            // cannot speak here.
            guard admissible([hello.device.id], on: connection) else { return }
            connection.device = hello.device
            logger.info(
                "device connected",
                metadata: [
                    "library": .string(name), "device": .string(hello.device.id.description),
                    "connection": .stringConvertible(connection.id), "peer": .string(connection.peer),
                ])
        }
        // A finished session has nothing more to say to a late repeat of its hello.
        guard connection.finishedPeers[channel] == nil else { return }
        if var session = connection.sessions[channel] {
            let actions = session.receive(.hello(hello))
            connection.sessions[channel] = session
            return perform(actions, on: channel, of: connection)
        }
        guard !budget.isSpent else {
            return refuse(connection, code: 1013, "the server is overloaded: its memory budget is spent")
        }
        let summary: ServerLogSummary
        do { summary = try currentSummary() } catch {
            return fail(connection, "reading the library's summary for a hello", error)
        }
        var session = SyncSession(
            device: log.device, id: random.next(), role: .responder, vectors: summary.vectors, heads: summary.heads,
            devices: summary.devices, limits: SyncSession.Limits(requestWindow: limits.requestWindow))
        keep(channel, bytes: size, on: connection)
        metrics.sessions.increment()
        let actions = session.receive(.hello(hello))
        connection.sessions[channel] = session
        perform(actions, on: channel, of: connection)
    }

    /// Opens `channel`'s session on `connection`, forgetting the oldest sessions past the connection's bounds (the
    /// newest is always kept).
    private func keep(_ channel: UInt64, bytes: Int, on connection: Connection) {
        connection.opened.append(channel)
        connection.started[channel] = .now
        // A hello decoded takes about four times its encoded size (a dictionary entry and a vector per document).
        let held = bytes * 4
        connection.sessionBytes[channel] = held
        connection.liveChannel = channel
        budget.charge(held)
        while connection.opened.count > 1,
            connection.opened.count > limits.sessionsPerConnection
                || connection.sessionBytes.values.reduce(0, +) > limits.sessionBytesPerConnection
        {
            let oldest = connection.opened.removeFirst()
            connection.sessions[oldest] = nil
            connection.started[oldest] = nil
            connection.finishedPeers[oldest] = nil
            budget.release(connection.sessionBytes.removeValue(forKey: oldest) ?? 0)
        }
    }

    /// What the server's hello announces: every document's vector and heads, and the names of the devices that
    /// wrote in the log (never more than ``ServerLimits/namedDevicesPerLibrary``), read again after a batch.
    private func currentSummary() throws -> ServerLogSummary {
        if let summary { return summary }
        var read = try log.summary()
        var authors = Set<DeviceID>()
        for vector in read.vectors.values { authors.formUnion(vector.devices) }
        read.devices = Array(read.devices.filter { authors.contains($0.id) }.prefix(limits.namedDevicesPerLibrary))
        summary = read
        if documents == nil { documents = Set(read.vectors.keys) }
        return read
    }

    /// Whether none of `devices` is bound to another library; refuses the connection when one is.
    private func admissible(_ devices: [DeviceID], on connection: Connection) -> Bool {
        let unknown = Array(Set(devices).subtracting(boundDevices)).sorted()
        guard !unknown.isEmpty else { return true }
        do {
            if let first = try accounts.boundElsewhere(unknown, than: name).first {
                refuse(connection, code: 1008, "device \(first) belongs to another library")
                return false
            }
        } catch {
            fail(connection, "looking up the libraries of devices", error)
            return false
        }
        return true
    }

    /// Binds to this library the devices whose changes it stored (their keys signed them); logs those already bound
    /// to another library (they wrote into two at once).
    private func bind(_ devices: Set<DeviceID>) {
        let unknown = Array(devices.subtracting(boundDevices)).sorted()
        guard !unknown.isEmpty else { return }
        do {
            let foreign = try accounts.bind(unknown, to: name)
            if !foreign.isEmpty {
                logger.warning(
                    "devices wrote into two libraries at once",
                    metadata: ["library": .string(name), "devices": .string("\(foreign)")])
            }
            boundDevices.formUnion(unknown)
        } catch {
            logger.error(
                "binding devices failed", metadata: ["library": .string(name), "error": .string("\(error)")])
        }
    }

    /// Records the name `device` gave itself on `connection`, where it proved its key, and tells the library's other
    /// connected devices; within ``ServerLimits/namedDevicesPerLibrary``.
    private func recordName(of device: Device, provenOn connection: Connection) {
        guard !device.name.isEmpty else { return }
        do {
            if namedDevices == nil { namedDevices = Set(try currentSummary().devices.map(\.id)) }
            guard namedDevices!.contains(device.id) || namedDevices!.count < limits.namedDevicesPerLibrary else {
                return
            }
            try log.name(device)
            namedDevices!.insert(device.id)
        } catch {
            return logger.error(
                "recording a device's name failed", metadata: ["library": .string(name), "error": .string("\(error)")])
        }
        summary = nil
        // The others hear of it as a hello of their session that adds nothing but the name.
        for other in connections.keys.sorted().compactMap({ connections[$0] }) where other.id != connection.id {
            guard let channel = other.liveChannel, let session = other.sessions[channel] else { continue }
            guard let peer = session.peer?.session ?? other.finishedPeers[channel] else { continue }
            let hello = SyncHello(
                device: log.device, session: session.id, replyTo: peer, vectors: [:], devices: [device])
            let frame = SyncFrame.encode(.hello(hello), on: channel)
            metrics.bytesOut.increment(by: Int64(frame.count))
            other.outbox.send(frame)
        }
    }

    private func perform(_ actions: [SyncAction], on channel: UInt64, of connection: Connection) {
        // Work that waits keeps its order: what comes later waits behind it.
        guard connection.deferred.isEmpty else {
            connection.deferred.append((channel, actions))
            return
        }
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .send(let message):
                // Replies wait for the client to read what it was sent, as fetches do.
                if connection.outbox.isBusy {
                    connection.deferred.append((channel, [action] + Array(queue)))
                    let id = connection.id
                    connection.outbox.whenDrained { Task { await self.resume(id) } }
                    return
                }
                send(message, on: channel, to: connection)
            case .fetch(let document, let since):
                if connection.outbox.isBusy {
                    // The client has not read what it was sent: read no more of the log until it has.
                    connection.deferred.append((channel, [action] + Array(queue)))
                    let id = connection.id
                    connection.outbox.whenDrained { Task { await self.resume(id) } }
                    return
                }
                guard var session = connection.sessions[channel] else { return }
                let found: (changes: [EncodedChange], heads: [SignedHead])
                do { found = try log.changes(of: document, since: since) } catch {
                    return fail(connection, "reading the changes of document \(document)", error)
                }
                metrics.changesOut.increment(by: Int64(found.changes.count))
                queue.append(contentsOf: session.fetched(found.changes, heads: found.heads, of: document))
                connection.sessions[channel] = session
            case .ingest:
                // `changes` messages never reach the session directly: they wait for a batch (see `drain`).
                break
            case .verify(let document, let heads):
                for head in heads {
                    do {
                        guard try log.contains(head, of: document) else {
                            return refuse(
                                connection, code: 1008,
                                "document \(document): the device's head \(head.shortHex) is not in the server's log although the server has every change the device's vector names (a device identity reused with other changes)"
                            )
                        }
                    } catch {
                        return fail(connection, "looking up a head of document \(document)", error)
                    }
                }
            }
        }
    }

    /// Sends a message of a session: a reply, paced by the client's reading rather than refused as slow.
    private func send(_ message: SyncMessage, on channel: UInt64, to connection: Connection) {
        let frame = SyncFrame.encode(message, on: channel)
        metrics.bytesOut.increment(by: Int64(frame.count))
        connection.outbox.reply(frame)
    }

    /// Goes on with the session work of connection `id` that waited for its outbox to drain.
    private func resume(_ id: UInt64) {
        guard let connection = connections[id] else { return }
        var work = connection.deferred[...]
        connection.deferred = []
        while let (channel, actions) = work.popFirst() {
            // A connection refused or closed meanwhile gets nothing more.
            guard connections[id] != nil, connection.outbox.requestedClose == nil else { return }
            perform(actions, on: channel, of: connection)
            if !connection.deferred.isEmpty {
                connection.deferred += work
                return
            }
        }
    }

    private func drainScheduledBatch() {
        drainScheduled = false
        drain()
    }

    /// Ingests every waiting `changes` message in one transaction; when that fails, connection by connection, so
    /// that one device's refused change does not hold back another's (its connection is closed).
    private func drain() {
        guard !arrivals.isEmpty else { return }
        var batch = arrivals
        arrivals = []
        // What the batch held is no longer in flight, whatever becomes of it.
        for arrival in batch {
            budget.release(arrival.bytes)
            connections[arrival.connection]?.inFlight -= arrival.bytes
        }
        // Authors must not belong to another library; they are bound to this one once their changes are stored.
        var byConnection: [UInt64: [DeviceID]] = [:]
        for arrival in batch {
            byConnection[arrival.connection, default: []] += arrival.changes.map(\.change.id.device)
        }
        for id in byConnection.keys.sorted() {
            guard let connection = connections[id] else { continue }
            if !admissible(byConnection[id]!, on: connection) { batch.removeAll { $0.connection == id } }
        }
        batch = withinQuota(batch)
        guard !batch.isEmpty else { return }
        metrics.ingestBatches.increment()
        // The documents' vectors before the batch: what it stored is what they gained.
        var before: [DocumentID: VersionVector] = [:]
        do {
            for document in Set(batch.map(\.document)) { before[document] = try log.vector(of: document) }
        } catch {
            return failAll(batch, "reading a vector before a batch", error)
        }
        var stored: [Arrival] = []
        var refusedHeads: [(head: ChangeID, reason: String)] = []
        var applied = 0
        do {
            let result = try log.ingest(batch.flatMap(\.changes), heads: batch.flatMap(\.heads))
            applied = result.applied.count
            refusedHeads = result.refusedHeads
            stored = batch
        } catch {
            var ids: [UInt64] = []
            for arrival in batch where !ids.contains(arrival.connection) { ids.append(arrival.connection) }
            for id in ids {
                let own = batch.filter { $0.connection == id }
                do {
                    let result = try log.ingest(own.flatMap(\.changes), heads: own.flatMap(\.heads))
                    applied += result.applied.count
                    refusedHeads += result.refusedHeads
                    stored += own
                } catch {
                    refuseIngest(own, error)
                }
            }
        }
        metrics.changesIn.increment(by: Int64(applied))
        // A head that does not check closes the connection that sent it (what else it brought is stored).
        for refused in refusedHeads {
            for arrival in stored where arrival.heads.contains(where: { $0.change == refused.head }) {
                guard let connection = connections[arrival.connection] else { continue }
                refuse(connection, code: 1008, "a signed head does not check: \(refused.reason)")
            }
        }
        // The documents' vectors after the batch.
        var vectors: [DocumentID: VersionVector] = [:]
        for document in Set(stored.map(\.document)).sorted() {
            do { vectors[document] = try log.vector(of: document) } catch {
                return failAll(stored, "reading a vector after a batch", error)
            }
        }
        if applied > 0 { summary = nil }
        // What each document gained, the changes themselves, and who wrote them.
        var gained: [DocumentID: (changes: [EncodedChange], heads: [SignedHead])] = [:]
        for document in vectors.keys.sorted() where vectors[document] != before[document] {
            documents?.insert(document)
            do {
                gained[document] = try storedChanges(
                    of: document, before: before[document]!, after: vectors[document]!, in: stored)
            } catch {
                return failAll(stored, "reading the changes a batch stored", error)
            }
        }
        let authors = Set(gained.values.flatMap { $0.changes.map(\.change.id.device) })
        bind(authors)
        // A device that wrote through its own connection proved its key there: its name is recorded.
        for arrival in stored {
            guard let connection = connections[arrival.connection], !connection.proven,
                let device = connection.device, authors.contains(device.id),
                gained[arrival.document]?.changes.contains(where: { $0.change.id.device == device.id }) == true
            else { continue }
            connection.proven = true
            recordName(of: device, provenOn: connection)
        }
        // Each sender's session learns what it now holds.
        for arrival in stored {
            guard let connection = connections[arrival.connection], connection.finishedPeers[arrival.channel] == nil,
                var session = connection.sessions[arrival.channel]
            else { continue }
            let wasFinished = session.isFinished
            let actions = session.ingested(arrival.document, vector: vectors[arrival.document]!)
            connection.sessions[arrival.channel] = session
            perform(actions, on: arrival.channel, of: connection)
            if !wasFinished, session.isFinished { finished(arrival.channel, of: connection) }
        }
        // Every device hears of what grew; the others get the changes stored, never the bytes received.
        let listeners = connections.keys.sorted().compactMap { connections[$0] }.filter { $0.liveChannel != nil }
        var splitter = SyncSession(device: log.device, id: 0, role: .responder, vectors: [:])
        for document in gained.keys.sorted() {
            let (changes, heads) = gained[document]!
            let messages = splitter.fetched(changes, heads: heads, of: document).compactMap { action in
                if case .send(let message) = action { message.encoded() } else { nil }
            }
            // A device that alone sent a document's changes of this batch has them.
            let origins = Set(stored.filter { $0.document == document }.map(\.connection))
            for listener in listeners where !(origins.count == 1 && origins.contains(listener.id)) {
                for message in messages {
                    let frame = SyncFrame.message(channel: listener.liveChannel!, bytes: message).encoded()
                    metrics.bytesOut.increment(by: Int64(frame.count))
                    listener.outbox.send(frame)
                }
                metrics.changesOut.increment(by: Int64(changes.count))
            }
        }
        for document in vectors.keys.sorted() {
            let notice = SyncFrame.notice(document: document, vector: vectors[document]!).encoded()
            for listener in listeners {
                metrics.bytesOut.increment(by: Int64(notice.count))
                listener.outbox.send(notice)
            }
        }
    }

    /// The changes of `document` a batch stored (those above `before`), in causal order, with heads that vouch for
    /// them: the batch's own when its messages hold them all, otherwise read from the log (changes that waited for
    /// the batch were stored with it).
    private func storedChanges(
        of document: DocumentID, before: VersionVector, after: VersionVector, in batch: [Arrival]
    ) throws -> (changes: [EncodedChange], heads: [SignedHead]) {
        var expected = 0
        for device in after.devices { expected += Int(after[device] - min(after[device], before[device])) }
        var seen = Set<ChangeID>()
        var changes: [EncodedChange] = []
        var heads: [SignedHead] = []
        for arrival in batch where arrival.document == document {
            for change in arrival.changes where !before.contains(change.change.id) && after.contains(change.change.id) {
                guard seen.insert(change.change.id).inserted else {
                    return try log.changes(of: document, since: before)
                }
                changes.append(change)
            }
            heads += arrival.heads.filter { seen.contains($0.change) }
        }
        guard changes.count == expected else { return try log.changes(of: document, since: before) }
        // A change the batch stored through a head whose own change waits (for a dependency) has no head here: it
        // would wait unvouched on the devices; it reaches them with that head's change instead (or from the log).
        var reach: [DeviceID: UInt64] = [:]
        for head in heads { reach[head.change.device] = max(reach[head.change.device] ?? 0, head.change.seq) }
        return (changes.filter { $0.change.id.seq <= reach[$0.change.id.device] ?? 0 }, heads)
    }

    /// The arrivals of `batch` the library's quotas leave: a connection whose messages would take the log past
    /// ``ServerLimits/libraryQuota`` bytes or ``ServerLimits/documentsPerLibrary`` documents is closed (4413).
    private func withinQuota(_ batch: [Arrival]) -> [Arrival] {
        guard !batch.isEmpty else { return batch }
        do {
            // The log's size is read at most once a second, unless what arrived since could take it past the quota.
            let incoming = batch.reduce(0) { $0 + $1.bytes }
            let now = ContinuousClock.now
            if let known = knownSize, now - known.at < .seconds(1),
                known.bytes + bytesSinceSized + incoming <= limits.libraryQuota
            {
                bytesSinceSized += incoming
            } else {
                knownSize = (try log.byteSize(), now)
                bytesSinceSized = incoming
            }
            let size = knownSize!.bytes
            if size > limits.libraryQuota {
                for id in Set(batch.map(\.connection)).sorted() {
                    guard let connection = connections[id] else { continue }
                    refuse(
                        connection, code: 4413,
                        "the library is over its storage quota (\(size) bytes; at most \(limits.libraryQuota))")
                }
                return []
            }
            if documents == nil { _ = try currentSummary() }
        } catch {
            failAll(batch, "checking the library's quota", error)
            return []
        }
        var kept: [Arrival] = []
        var known = documents ?? []
        var refused = Set<UInt64>()
        for arrival in batch {
            guard !refused.contains(arrival.connection) else { continue }
            if !known.contains(arrival.document) {
                guard known.count < limits.documentsPerLibrary else {
                    refused.insert(arrival.connection)
                    if let connection = connections[arrival.connection] {
                        refuse(
                            connection, code: 4413,
                            "the library holds as many documents as its quota allows (\(limits.documentsPerLibrary))")
                    }
                    continue
                }
                known.insert(arrival.document)
            }
            kept.append(arrival)
        }
        return kept.filter { !refused.contains($0.connection) }
    }

    /// Closes the connections of `arrivals`, whose changes `error` refused: 1008 when the changes broke a rule,
    /// 1011 when the storage failed.
    private func refuseIngest(_ arrivals: [Arrival], _ error: any Error) {
        let storageFailed = (error as? StoreError).map { ![.integrity, .invalidChange].contains($0.code) } ?? true
        for id in Set(arrivals.map(\.connection)).sorted() {
            guard let connection = connections[id] else {
                logger.warning("changes refused", metadata: ["library": .string(name), "error": .string("\(error)")])
                continue
            }
            if storageFailed {
                fail(connection, "storing changes", error)
            } else {
                refuse(connection, code: 1008, "a change was refused: \(error)")
            }
        }
    }

    /// Closes the connections of `arrivals` because the storage failed (1011).
    private func failAll(_ arrivals: [Arrival], _ action: String, _ error: any Error) {
        for id in Set(arrivals.map(\.connection)).sorted() {
            if let connection = connections[id] { fail(connection, action, error) }
        }
    }

    private func finished(_ channel: UInt64, of connection: Connection) {
        // The session is kept light: it answers requests and repeated `done`s, and holds no summaries.
        if let session = connection.sessions[channel], let peer = session.peer {
            connection.sessions[channel] = SyncSession(
                device: log.device, id: session.id, role: .responder, vectors: [:], limits: session.limits)
            connection.finishedPeers[channel] = peer.session
            budget.release(connection.sessionBytes[channel] ?? 0)
            connection.sessionBytes[channel] = 0
        }
        guard let started = connection.started[channel] else { return }
        let elapsed = ContinuousClock.now - started
        metrics.syncDuration.recordNanoseconds(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        logger.info(
            "sync finished",
            metadata: [
                "library": .string(name), "device": .string(connection.device?.id.description ?? "?"),
                "channel": .stringConvertible(channel), "ms": .stringConvertible(Self.milliseconds(elapsed)),
            ])
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Closes `connection` for a protocol or policy breach, with a WebSocket close code and the reason.
    private func refuse(_ connection: Connection, code: UInt16, _ reason: String) {
        logger.warning(
            "connection closed",
            metadata: [
                "library": .string(name), "connection": .stringConvertible(connection.id),
                "code": .stringConvertible(code), "reason": .string(reason),
            ])
        metrics.connectionsClosedForErrors.increment()
        connection.outbox.close(code: code, reason: reason)
        if connections[connection.id] != nil { release(connection) }
        connections[connection.id] = nil
    }

    /// Closes `connection` because the server's storage failed (1011).
    private func fail(_ connection: Connection, _ action: String, _ error: any Error) {
        logger.error(
            "storage failed",
            metadata: ["library": .string(name), "while": .string(action), "error": .string("\(error)")])
        refuse(connection, code: 1011, "the server failed while \(action)")
    }
}

extension SyncMessage {
    /// The message's kind, for logs and close reasons.
    var kindName: String {
        switch self {
        case .hello: "hello"
        case .request: "request"
        case .changes: "changes"
        case .done: "done"
        }
    }
}
