import FolioCore
import FolioStore
import FolioSync
import Logging

/// What a session's actions send, paced by the connection's bytes in flight; a session's end; and connections
/// closed with a code.
extension ServedLibrary {
    func perform(_ actions: [SyncAction], on channel: UInt64, of connection: Connection) {
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
                if connection.format >= SyncMessage.runFormatVersion {
                    queue.append(
                        contentsOf: session.fetchedAsRuns(
                            found.changes, heads: found.heads, of: document, since: since,
                            outside: { [log] hash in try? log.change(hash, of: document) }))
                } else {
                    queue.append(contentsOf: session.fetched(found.changes, heads: found.heads, of: document))
                }
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
    func send(_ message: SyncMessage, on channel: UInt64, to connection: Connection) {
        if case .done = message, connection.blobAskingsOpen[channel]?.isEmpty == false {
            connection.heldDone[channel] = message
            return
        }
        let frame = SyncFrame.message(channel: channel, bytes: message.encoded(format: connection.format)).encoded()
        metrics.bytesOut.increment(by: Int64(frame.count))
        connection.outbox.reply(frame)
    }

    /// The most blob references a connection's open askings are counted by; past them, its sessions' `done` is no
    /// longer held (see ``Connection/blobAskingsOpen``).
    static let blobAskingsHeld = 16_384

    /// Counts blobs asked of `connection` on `channel` as open: its session's `done` waits for their answer.
    func asked(_ references: [BlobReference], on channel: UInt64, of connection: Connection) {
        let held = connection.blobAskingsOpen.values.reduce(0) { $0 + $1.count }
        guard held + references.count <= Self.blobAskingsHeld else {
            // A device this far behind in answering is not waited for: its sessions end as before.
            connection.blobAskingsOpen = [:]
            for (channel, done) in connection.heldDone.sorted(by: { $0.key < $1.key }) {
                connection.heldDone[channel] = nil
                send(done, on: channel, to: connection)
            }
            return
        }
        connection.blobAskingsOpen[channel, default: []].formUnion(references)
    }

    /// Takes the blobs a `blobs` message on `channel` of `connection` brought or named lacking off its open askings;
    /// once none is left, the session's `done` held back meanwhile goes.
    func answered(_ references: [BlobReference], on channel: UInt64, of connection: Connection) {
        guard var open = connection.blobAskingsOpen[channel], connections[connection.id] != nil else { return }
        open.subtract(references)
        guard open.isEmpty else {
            connection.blobAskingsOpen[channel] = open
            return
        }
        connection.blobAskingsOpen[channel] = nil
        if let done = connection.heldDone.removeValue(forKey: channel) { send(done, on: channel, to: connection) }
    }

    /// Goes on with the session work of connection `id` that waited for its outbox to drain.
    func resume(_ id: UInt64) {
        guard let connection = connections[id] else { return }
        var work = connection.deferred[...]
        connection.deferred = []
        while let (channel, actions) = work.popFirst() {
            // A connection refused or closed meanwhile (its socket too) gets nothing more.
            guard connections[id] != nil, !connection.outbox.hasEnded else { return }
            perform(actions, on: channel, of: connection)
            if !connection.deferred.isEmpty {
                connection.deferred += work
                return
            }
        }
    }

    func finished(_ channel: UInt64, of connection: Connection) {
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

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Closes `connection` for a protocol or policy breach, with a WebSocket close code and the reason.
    func refuse(_ connection: Connection, code: UInt16, _ reason: String) {
        logger.warning(
            "connection closed",
            metadata: [
                "library": .string(name), "connection": .stringConvertible(connection.id),
                "code": .stringConvertible(code), "reason": .string(reason),
            ])
        metrics.connectionsClosedForErrors.increment()
        connection.outbox.close(code: code, reason: reason)
        remove(connection)
    }

    /// Closes `connection` because the server's storage failed (1011).
    func fail(_ connection: Connection, _ action: String, _ error: any Error) {
        logger.error(
            "storage failed",
            metadata: ["library": .string(name), "while": .string(action), "error": .string("\(error)")])
        refuse(connection, code: 1011, "the server failed while \(action)")
    }
}
