import FolioCore
import FolioStore
import FolioSync
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Synchronization
import WSClient

/// One WebSocket connection to a server's library, for one sync (``WebSocketTransport``) or for as long as it lasts
/// (``LiveSync``).
///
/// On connecting, the client opens a session (`SyncDriver`, initiator) that catches both sides up. In live mode
/// the connection then stays open: the server passes on other devices' changes as it stores them, with a notice of
/// each document's new vector; a notice that names changes this store still lacks (one that arrived while a
/// message was in flight) is answered with a request. Local commits (`ChangeLogStore.observeAppends(_:)`) go to
/// the server as they happen, as the changes the server's last notice lacked.
struct ServerConnection {
    enum Mode {
        case once
        case live
    }

    /// Why a connection ended.
    struct Ended: Error, CustomStringConvertible {
        var description: String
        /// Whether the session at connection had finished (the connection was useful).
        var caughtUp: Bool
        /// Set when the server refused the token (close code 4401, 4402, 4403, 4405 or 4406): trying again cannot
        /// succeed.
        var refusal: UInt16? = nil
    }

    /// The close codes that refuse the token itself: no valid token (4401: unknown or revoked, or its user or share
    /// was), an expired one (4402), a token of another library (4403), a token that may only read used to write
    /// (4405), a token of single documents used for another (4406). Others (4409: the role or the documents granted
    /// changed; 4410: an admin closed the session; 4503: the library is offline) are tried again after the backoff.
    static func refusal(in close: WebSocketCloseFrame?) -> UInt16? {
        guard case .unknown(let code)? = close?.closeCode, [4401, 4402, 4403, 4405, 4406].contains(code) else {
            return nil
        }
        return code
    }

    let endpoint: ServerEndpoint
    let store: ChangeLogStore
    let mode: Mode
    let sessionID: UInt64
    /// How long without progress before a session's messages are repeated, and how many repeats before giving up.
    var tick: Duration = .seconds(1)
    var ticksBeforeGivingUp = 30
    /// Bytes of received frames held for the loop before the connection stops reading.
    var inboxBytes = 8 << 20
    /// How long the server may take to accept the connection (name resolution, connection and the WebSocket
    /// upgrade) before the attempt is given up (``ConnectionAttempt``): a server that dies between reading the upgrade
    /// request and answering it leaves a connection that would otherwise wait for ever.
    var acceptTimeout: Duration = .seconds(30)
    /// Where the connection runs (its handler, reader and ticker); a queue of its own when nil.
    var executor: BlockingWorkExecutor?
    /// Which message formats the client writes: with `runsWhenOffered` (the default), it lists formats 3 and 4 at the
    /// upgrade, and writes the newest the server writes once it does; with `runs`, format 3 only, from the start.
    var formats: SyncDriver.Formats = .runsWhenOffered
    /// This device's presence to send (live mode); `nil`: the connection neither sends nor reads presence.
    var presence: PresenceBoard?
    let logger: Logger

    /// Connects and runs; returns the report of the session at connection (for `once`), or throws ``Ended`` when the
    /// connection ends (for `live`, always, unless the task is cancelled).
    func run(onEvent: @escaping @Sendable (ServerSyncEvent) async -> Void) async throws -> SyncReport {
        var headers: HTTPFields = [.authorization: "Bearer \(endpoint.token)"]
        if formats != .plain, let name = HTTPField.Name(SyncMessage.formatsHeader) {
            headers[name] =
                formats == .runs
                ? "\(SyncMessage.formatVersion), \(SyncMessage.runFormatVersion)"
                : "\(SyncMessage.formatVersion), \(SyncMessage.runFormatVersion), \(SyncMessage.peopleFormatVersion)"
        }
        if presence != nil, let name = HTTPField.Name(SyncFrame.presenceHeader) { headers[name] = "1" }
        // This client reads the scope a token grants (a server refuses a token of single documents to one that
        // does not).
        if let name = HTTPField.Name(SyncScope.header) { headers[name] = "1" }
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: SyncFrame.maximumBytes, additionalHeaders: headers)
        configuration.autoPing = .enabled(timePeriod: .seconds(30))
        let outcome = OutcomeBox()
        if Task.isCancelled {
            throw Ended(description: "the connection was stopped before it was made", caughtUp: false)
        }
        // The connection's work blocks on the store: it runs on a queue of its own (a live sync's, so that passing a
        // frame to the loop wakes no other thread), so that a cooperative pool kept busy elsewhere in the app never
        // stalls what arrives, and the connection never stalls the pool.
        let executor = self.executor ?? BlockingWorkExecutor(label: "folio.connection")
        let attempt = ConnectionAttempt()
        let end = await attempt.run(acceptTimeout: acceptTimeout, on: executor) { loop in
            WebSocketClient(
                url: endpoint.syncAddress, configuration: configuration, eventLoopGroup: loop, logger: logger
            ) { inbound, outbound, _ in
                attempt.accepted()
                do {
                    let report = try await self.serve(
                        inbound: inbound, outbound: outbound, executor: executor, onEvent: onEvent)
                    outcome.set(.success(report))
                } catch {
                    outcome.set(.failure(error))
                }
            }
        }
        var close: WebSocketCloseFrame?
        // Closing can fail after the session ended (a close handshake cut short): the outcome decides.
        var failure: (any Error)?
        switch end {
        case .finished(let closed, let failed):
            close = closed
            failure = failed
        case .gaveUp(let cancelled):
            throw Ended(
                description: cancelled
                    ? "the connection was stopped before the server accepted it"
                    : "the server did not accept the connection within \(acceptTimeout)", caughtUp: false)
        }
        let closedWith = close.map { close in
            let code: String
            if case .unknown(let number) = close.closeCode { code = "\(number)" } else { code = "\(close.closeCode)" }
            return code + (close.reason.map { ": \($0)" } ?? "")
        }
        // A refused token is final whatever else happened (a write may have failed once the server closed).
        if let refusal = Self.refusal(in: close) {
            throw Ended(
                description: "the server refused the token (\(closedWith ?? "\(refusal)"))", caughtUp: false,
                refusal: refusal)
        }
        switch outcome.value {
        case .success(let report)?:
            return report
        case .failure(let error as Ended)?:
            throw Ended(
                description: error.description + (closedWith.map { " (the server closed it with \($0))" } ?? ""),
                caughtUp: error.caughtUp)
        case .failure(let error)?:
            throw error
        case nil:
            if let failure {
                throw Ended(description: "cannot connect to \(endpoint.syncAddress): \(failure)", caughtUp: false)
            }
            throw Ended(
                description: "the server refused or ended the connection (\(closedWith ?? "no close frame"))",
                caughtUp: false)
        }
    }

    private func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, executor: BlockingWorkExecutor,
        onEvent: @escaping @Sendable (ServerSyncEvent) async -> Void
    ) async throws -> SyncReport {
        let inbox = Inbox(frameBytes: inboxBytes)
        let reader = Task(executorPreference: executor) {
            do {
                for try await message in inbound.messages(maxSize: SyncFrame.maximumBytes) {
                    guard case .binary(let buffer) = message else { continue }
                    // Waits while the loop is behind: the socket then stops being read, and the server's bound on
                    // what it queues for this client applies.
                    await inbox.put(frame: Array(buffer.readableBytesView))
                }
                inbox.put { $0.closed = $0.closed ?? "the server closed the connection" }
            } catch {
                inbox.put { $0.closed = $0.closed ?? "reading from the server failed: \(error)" }
            }
        }
        let tick = self.tick
        let ticker = Task(executorPreference: executor) {
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                inbox.put { $0.ticks += 1 }
            }
        }
        let observation =
            mode == .live ? store.observeAppends { document in inbox.put { $0.appended.insert(document) } } : nil
        presence?.attach { inbox.put { $0.presence = true } }
        /// When presence was last sent, and the wait for the next send, if one is scheduled.
        var presenceSent: ContinuousClock.Instant?
        /// When every state was last sent again (``PresenceBoard/renewal``).
        var presenceRenewed = ContinuousClock.now
        /// Whether the server said it relays presence (`SyncFrame.presenceWelcome`): one from before presence closes a
        /// connection that sends it.
        var presenceWelcomed = false
        var presenceWait: Task<Void, Never>?
        defer {
            observation?.cancel()
            reader.cancel()
            ticker.cancel()
            presence?.detach()
            presenceWait?.cancel()
            inbox.finish()
        }
        // The server says whom each device acts for: its own word is taken.
        var driver = try SyncDriver(
            store: store, role: .initiator, id: sessionID, formats: formats, takesPersonsFromPeer: true)
        let channel = driver.session.id
        /// What this side announced in its hello: the server pulls all of it during the session.
        let announced = driver.session.vectors
        /// The documents the store kept to itself when the session started (the session's own set grows by those a
        /// scope leaves out).
        let unpublishedAtStart = driver.session.unpublished
        /// Documents this device keeps to itself, read again for every batch (a move to local may happen at any time).
        var unpublished = driver.session.unpublished
        /// What the token lets this connection sync, as the server's first frame says (`SyncFrame.scope`); the whole
        /// library until then, and with a server from before scopes.
        var scope = SyncScope.library(writes: true)
        /// Whether the server said the token may only read (`SyncFrame.readOnlyNotice` as its very first frame; the
        /// same bytes later are no such word): this side then offers nothing, and what this device commits stays on
        /// it.
        var readOnly = false
        var framesSeen = 0
        /// Whether this side leaves `document` out: kept on this device, or outside the token's scope.
        func excluded(_ document: DocumentID) -> Bool {
            unpublished.contains(document) || !scope.includes(document)
        }
        /// Whether this side sends `document`'s changes to the server.
        func sends(_ document: DocumentID) -> Bool {
            !readOnly && !excluded(document) && scope.writes(document)
        }
        func send(_ messages: [[UInt8]]) async throws {
            let started = ContinuousClock.now
            for message in messages {
                try await outbound.write(
                    .binary(ByteBuffer(bytes: SyncFrame.message(channel: channel, bytes: message).encoded())))
            }
            // Time spent writing (a large answer over a slow link) is not the server's silence: ticks that passed
            // meanwhile do not count toward giving up.
            if ContinuousClock.now - started >= tick { inbox.put { $0.ticks = 0 } }
        }
        await onEvent(.connected)
        try await send(driver.start())
        let device = store.localDevice.id

        /// Sends this device's presence that changed, at most once per `PresenceBoard.interval`: sooner, it is sent
        /// when the interval ends.
        func sendPresence() async throws {
            guard let presence, presenceWelcomed, presence.hasChanges else { return }
            let now = ContinuousClock.now
            if let sent = presenceSent, now - sent < PresenceBoard.interval {
                guard presenceWait == nil else { return }
                let wait = PresenceBoard.interval - (now - sent)
                presenceWait = Task(executorPreference: executor) {
                    try? await Task.sleep(for: wait)
                    inbox.put { $0.presence = true }
                }
                return
            }
            presenceWait = nil
            presenceSent = now
            for (document, state) in presence.takeChanged() where !excluded(document) {
                try await outbound.write(
                    .binary(
                        ByteBuffer(
                            bytes: SyncFrame.presence(document: document, device: device, state: state).encoded())))
            }
        }
        var caughtUp = false
        var idleTicks = 0
        /// What the server is known to hold (its notices), and what was sent beyond that.
        var stored: [DocumentID: VersionVector] = [:]
        var sent: [DocumentID: VersionVector] = [:]
        /// For documents with changes sent but not acknowledged, what the server had acknowledged at the last tick.
        var unacknowledged: [DocumentID: VersionVector] = [:]

        /// Sends the changes of `document` the server lacks as far as this side knows.
        func offer(_ document: DocumentID) async throws {
            guard sends(document) else { return }
            let since = (sent[document] ?? VersionVector()).merging(stored[document] ?? VersionVector())
            // The vector is read before the changes: a commit between the two is then sent again next time, rather
            // than counted as sent and never sent.
            let vector = try Self.vector(of: document, in: store)
            guard !vector.isContained(in: since) else { return }
            let messages = try driver.offer(document, since: since)
            sent[document] = vector
            try await send(messages)
        }

        /// Handles the messages of a run of frames on this channel together: the changes of consecutive `changes`
        /// messages enter the log in one transaction.
        func receive(_ messages: [[UInt8]]) async throws -> SyncReport? {
            guard !messages.isEmpty else { return nil }
            try await send(driver.receive(batch: messages))
            let updated = driver.takeUpdatedDocuments()
            if !updated.isEmpty { await onEvent(.received(updated)) }
            guard !caughtUp, driver.isFinished else { return nil }
            caughtUp = true
            await onEvent(.caughtUp(driver.report))
            guard mode == .live else { return driver.report }
            guard !readOnly else { return nil }
            // Whatever was committed while the session ran goes now: what neither the server announced nor this side
            // did (the server pulled that), for documents this device shares.
            for (document, vector) in try Self.summaries(of: store) where sends(document) {
                let known = (driver.session.peer?.vectors[document] ?? VersionVector())
                    .merging(announced[document] ?? VersionVector())
                guard !vector.isContained(in: known) else { continue }
                try await send(driver.offer(document, since: known))
                sent[document] = vector
            }
            return nil
        }

        for await _ in inbox.wakeUps {
            let batch = inbox.take()
            guard !batch.isEmpty else { continue }
            unpublished = try Self.unpublished(in: store)
            if unpublished != unpublishedAtStart {
                // A document moved between containers: a new session starts from the new set (what the server
                // lacks of a document now shared is pulled there; one now kept here is no longer announced).
                throw Ended(description: "a document moved between containers", caughtUp: caughtUp)
            }
            // Local commits first: what this device made never waits behind what it receives.
            if caughtUp {
                for document in batch.appended.sorted() { try await offer(document) }
            }
            if !batch.frames.isEmpty { idleTicks = 0 }
            var run: [[UInt8]] = []
            for bytes in batch.frames {
                framesSeen += 1
                let frame: SyncFrame
                do { frame = try SyncFrame(decoding: bytes) } catch {
                    try? await outbound.close(.protocolError, reason: "a frame does not decode")
                    throw Ended(
                        description: "the server sent a frame that does not decode: \(error)", caughtUp: caughtUp)
                }
                switch frame {
                case .message(let on, let message):
                    // Changes of a document this device keeps to itself are not taken, even pushed.
                    guard on == channel else { continue }
                    if let document = SyncMessage.changesDocument(message), excluded(document) { continue }
                    run.append(message)
                case .notice where framesSeen == 1 && frame == SyncFrame.readOnlyNotice:
                    if !readOnly { await onEvent(.readOnly) }
                    readOnly = true
                case .scope(let granted) where framesSeen == 1:
                    // Before the server's hello: the session leaves out what the scope does, so that it neither
                    // offers nor takes it.
                    scope = granted
                    if case .documents = granted {
                        let outside = try Self.summaries(of: store).map(\.0).filter { !granted.includes($0) }
                        driver.keepToItself(Set(outside))
                    }
                    await onEvent(.scope(granted))
                    if !granted.writesAny {
                        readOnly = true
                        await onEvent(.readOnly)
                    }
                case .scope:
                    // Only the first frame says what the connection may sync.
                    continue
                case .presence where frame == SyncFrame.presenceWelcome:
                    // The server relays presence: this device's may go.
                    presenceWelcomed = true
                case .presence(let document, let from, let state):
                    // Others' presence only, in documents this device shares.
                    guard presence != nil, from != device, !excluded(document) else { continue }
                    await onEvent(.presence(document: document, device: from, state: state))
                case .notice(let document, let vector):
                    if let report = try await receive(run) { return report }
                    run = []
                    stored[document] = (stored[document] ?? VersionVector()).merging(vector)
                    if vector[store.localDevice.id] > 0 {
                        await onEvent(.acknowledged(document: document, vector: vector))
                    }
                    // A document this device keeps to itself is not asked for.
                    guard caughtUp, !excluded(document) else { continue }
                    let own = try Self.vector(of: document, in: store)
                    if !vector.isContained(in: own) { try await send(driver.request(document)) }
                }
            }
            if let report = try await receive(run) { return report }
            try await sendPresence()
            if batch.ticks > 0 {
                if caughtUp {
                    // What was sent but is still not acknowledged a tick later, and did not move since the last tick,
                    // is sent again from what the server acknowledged (duplicates are ignored there).
                    for document in sent.keys.sorted() where sends(document) {
                        let acknowledged = stored[document] ?? VersionVector()
                        guard let vector = sent[document], !vector.isContained(in: acknowledged) else { continue }
                        if unacknowledged[document] == acknowledged {
                            sent[document] = try Self.vector(of: document, in: store)
                            try await send(driver.offer(document, since: acknowledged))
                        }
                        unacknowledged[document] = acknowledged
                    }
                } else {
                    idleTicks += batch.ticks
                    guard idleTicks <= ticksBeforeGivingUp else {
                        throw Ended(description: "the server stopped answering the session", caughtUp: false)
                    }
                    try await send(driver.tick())
                }
            }
            if batch.ticks > 0, let presence, ContinuousClock.now - presenceRenewed >= PresenceBoard.renewal {
                presenceRenewed = .now
                presence.renew()
                try await sendPresence()
            }
            if let reason = batch.closed { throw Ended(description: reason, caughtUp: caughtUp) }
        }
        throw Ended(description: "the connection was stopped", caughtUp: caughtUp)
    }

    private static func summaries(of store: ChangeLogStore) throws -> [(DocumentID, VersionVector)] {
        do { return try store.summaries().map { ($0.document, $0.vector) } } catch {
            throw SyncError(.store, "the store failed while summarising it", cause: error)
        }
    }

    private static func unpublished(in store: ChangeLogStore) throws -> Set<DocumentID> {
        do { return try store.unpublished.documents() } catch {
            throw SyncError(.store, "the store failed while reading the documents kept on this device", cause: error)
        }
    }

    private static func vector(of document: DocumentID, in store: ChangeLogStore) throws -> VersionVector {
        do { return try store.vector(of: document) } catch {
            throw SyncError(.store, "the store failed while reading the vector of \(document)", cause: error)
        }
    }
}

/// The outcome of the handler, read after the client returns.
private final class OutcomeBox: Sendable {
    private let stored = Mutex<Result<SyncReport, any Error>?>(nil)

    func set(_ value: Result<SyncReport, any Error>) { stored.withLock { $0 = value } }
    var value: Result<SyncReport, any Error>? { stored.withLock { $0 } }
}
