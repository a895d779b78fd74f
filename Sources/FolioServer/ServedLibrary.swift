import FolioCore
import FolioStore
import FolioSync
import Logging

/// One library on the server: its log, the connections of its devices, and the sessions they run.
///
/// Everything here runs on the library's own serial executor, off the network's threads (the log's calls block).
/// Changes from every connection are ingested together: while one batch is written, the next gathers, so that one
/// commit serves many devices. Once a batch is stored, each document that grew is announced to every
/// connection of the library with a notice (the acknowledgement, for the devices that sent it), and the messages that
/// carried the changes are passed on to the other devices, which so learn of them without polling.
actor ServedLibrary {
    let name: String
    private let log: any ServerLog
    private let accounts: AccountStore
    private let metrics: ServerMetrics
    private let logger: Logger
    private let limits: ServerLimits
    private let executor: BlockingWorkExecutor
    private var random: SplitMix64

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A connection's state.
    private final class Connection {
        let id: UInt64
        let outbox: Outbox
        let peer: String
        /// The device speaking on this connection, from its first hello.
        var device: Device?
        /// Sessions by channel, and the order they were opened in (the oldest leaves first past the limit).
        var sessions: [UInt64: SyncSession] = [:]
        var opened: [UInt64] = []
        var started: [UInt64: ContinuousClock.Instant] = [:]
        /// The channel changes from other devices are passed on: the latest session's.
        var liveChannel: UInt64?
        /// Session work waiting for the outbox to drain (a catch-up read at the pace the client reads), in order.
        var deferred: [(channel: UInt64, actions: [SyncAction])] = []

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
        var bytes: [UInt8]
    }

    private var connections: [UInt64: Connection] = [:]
    private var nextConnection: UInt64 = 0
    private var arrivals: [Arrival] = []
    private var drainScheduled = false
    /// Devices known to be bound to this library (saves the account database a query per batch).
    private var boundDevices: Set<DeviceID> = []

    init(
        name: String, log: any ServerLog, accounts: AccountStore, metrics: ServerMetrics, logger: Logger,
        limits: ServerLimits, seed: UInt64
    ) {
        self.name = name
        self.log = log
        self.accounts = accounts
        self.metrics = metrics
        self.logger = logger
        self.limits = limits
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
        connections[id] = nil
    }

    /// The number of connections open.
    var connectionCount: Int { connections.count }

    /// Handles one decoded message that arrived on `channel` of connection `id`, with its bytes.
    func receive(_ message: SyncMessage, bytes: [UInt8], channel: UInt64, from id: UInt64) {
        guard let connection = connections[id] else { return }
        if case .changes(let document, let changes, let heads) = message {
            guard connection.sessions[channel] != nil else {
                return refuse(connection, code: 1002, "changes on channel \(channel) before a hello there")
            }
            guard arrivals.count < limits.waitingMessages else {
                return refuse(connection, code: 1013, "the server is overloaded: too many messages wait to be stored")
            }
            arrivals.append(
                Arrival(
                    connection: id, channel: channel, document: document, changes: changes, heads: heads,
                    bytes: bytes))
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
            receiveHello(hello, channel: channel, on: connection)
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

    private func receiveHello(_ hello: SyncHello, channel: UInt64, on connection: Connection) {
        guard hello.replyTo == nil else {
            return refuse(connection, code: 1002, "a client's hello must not answer a session")
        }
        if let device = connection.device {
            guard device.id == hello.device.id else {
                return refuse(connection, code: 1008, "one connection speaks for one device (\(device.id))")
            }
        } else {
            guard admit([hello.device.id], on: connection) else { return }
            connection.device = hello.device
            logger.info(
                "device connected",
                metadata: [
                    "library": .string(name), "device": .string(hello.device.id.description),
                    "connection": .stringConvertible(connection.id), "peer": .string(connection.peer),
                ])
        }
        if var session = connection.sessions[channel] {
            let actions = session.receive(.hello(hello))
            connection.sessions[channel] = session
            return perform(actions, on: channel, of: connection)
        }
        let summary: ServerLogSummary
        do {
            try log.learn(hello.devices + [hello.device])
            summary = try log.summary()
        } catch {
            return fail(connection, "reading the library's summary for a hello", error)
        }
        var session = SyncSession(
            device: log.device, id: random.next(), role: .responder, vectors: summary.vectors, heads: summary.heads,
            devices: summary.devices)
        if connection.sessions.count >= limits.sessionsPerConnection, let oldest = connection.opened.first {
            connection.opened.removeFirst()
            connection.sessions[oldest] = nil
            connection.started[oldest] = nil
        }
        connection.opened.append(channel)
        connection.started[channel] = .now
        connection.liveChannel = channel
        metrics.sessions.increment()
        let actions = session.receive(.hello(hello))
        connection.sessions[channel] = session
        perform(actions, on: channel, of: connection)
    }

    /// Binds `devices` to this library; refuses the connection when one belongs to another.
    private func admit(_ devices: [DeviceID], on connection: Connection) -> Bool {
        let unknown = Array(Set(devices).subtracting(boundDevices)).sorted()
        guard !unknown.isEmpty else { return true }
        do {
            let foreign = try accounts.bind(unknown, to: name)
            if let first = foreign.first {
                refuse(connection, code: 1008, "device \(first) belongs to another library")
                return false
            }
        } catch {
            fail(connection, "binding devices to the library", error)
            return false
        }
        boundDevices.formUnion(unknown)
        return true
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
        // Authors must belong to this library.
        var byConnection: [UInt64: [DeviceID]] = [:]
        for arrival in batch {
            byConnection[arrival.connection, default: []] += arrival.changes.map(\.change.id.device)
        }
        for id in byConnection.keys.sorted() {
            guard let connection = connections[id] else { continue }
            if !admit(byConnection[id]!, on: connection) { batch.removeAll { $0.connection == id } }
        }
        guard !batch.isEmpty else { return }
        metrics.ingestBatches.increment()
        var stored: [Arrival] = []
        var applied = 0
        do {
            let result = try log.ingest(batch.flatMap(\.changes), heads: batch.flatMap(\.heads))
            applied = result.applied.count
            stored = batch
        } catch {
            var ids: [UInt64] = []
            for arrival in batch where !ids.contains(arrival.connection) { ids.append(arrival.connection) }
            for id in ids {
                let own = batch.filter { $0.connection == id }
                do {
                    applied += try log.ingest(own.flatMap(\.changes), heads: own.flatMap(\.heads)).applied.count
                    stored += own
                } catch {
                    if let connection = connections[id] {
                        refuse(connection, code: 1008, "a change was refused: \(error)")
                    } else {
                        logger.warning(
                            "changes refused", metadata: ["library": .string(name), "error": .string("\(error)")])
                    }
                }
            }
        }
        metrics.changesIn.increment(by: Int64(applied))
        // The documents' vectors after the batch.
        var vectors: [DocumentID: VersionVector] = [:]
        for document in Set(stored.map(\.document)).sorted() {
            do { vectors[document] = try log.vector(of: document) } catch {
                logger.error(
                    "reading a vector failed", metadata: ["library": .string(name), "error": .string("\(error)")])
                return
            }
        }
        // Each sender's session learns what it now holds.
        for arrival in stored {
            guard let connection = connections[arrival.connection], var session = connection.sessions[arrival.channel]
            else { continue }
            let wasFinished = session.isFinished
            let actions = session.ingested(arrival.document, vector: vectors[arrival.document]!)
            connection.sessions[arrival.channel] = session
            perform(actions, on: arrival.channel, of: connection)
            if !wasFinished, session.isFinished { finished(arrival.channel, of: connection) }
        }
        // Every device hears of what grew; the others get the changes themselves.
        let listeners = connections.keys.sorted().compactMap { connections[$0] }.filter { $0.liveChannel != nil }
        for arrival in stored {
            let vector = vectors[arrival.document]!
            guard arrival.changes.allSatisfy({ vector.contains($0.change.id) }) else { continue }
            for listener in listeners where listener.id != arrival.connection {
                let frame = SyncFrame.message(channel: listener.liveChannel!, bytes: arrival.bytes).encoded()
                metrics.bytesOut.increment(by: Int64(frame.count))
                metrics.changesOut.increment(by: Int64(arrival.changes.count))
                listener.outbox.send(frame)
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

    private func finished(_ channel: UInt64, of connection: Connection) {
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
