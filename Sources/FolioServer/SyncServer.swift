import FolioCore
import FolioStore
import FolioSync
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The sync server behind `folio serve`: devices of a library connect over WebSocket, sync with the library's log on
/// the server, and hear of each other's changes as they are stored.
///
/// Routes:
/// - `GET /v1/libraries/{library}/sync` with `Authorization: Bearer <token>`, upgraded to a WebSocket that carries
///   the sync protocol (docs/protocol.md). No token or an unknown one: 401; a token of another library: 403.
/// - `GET /health`: `ok` while the server runs and its storage answers; 503 and the reason while it does not (see
///   ``ServerStorage/unhealthyReason``).
/// - `GET /metrics`: counters in Prometheus' text format.
///
/// The data directory holds `accounts.sqlite` (accounts, libraries, hashed tokens, device bindings) and one log per
/// library in `libraries/`, behind ``ServerLog`` (``ServerDataDirectory`` says how its files are named).
public final class SyncServer: Sendable {
    /// Where and how the server runs.
    public struct Configuration: Sendable {
        /// The address to listen on; loopback by default.
        public var host: String
        /// The port; 0 picks a free one (see ``SyncServer/run(onListening:)``).
        public var port: Int
        /// The data directory.
        public var dataDirectory: URL
        /// Bounds on clients.
        public var limits: ServerLimits
        /// How the libraries' logs reach the disk.
        public var durability: Durability
        /// The keys of tokens the app's backend signs, accepted beside the server's own; `nil` to accept only the
        /// server's own tokens.
        public var appTokens: AppTokenKeys?

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL,
            limits: ServerLimits = ServerLimits(), durability: Durability = .normal, appTokens: AppTokenKeys? = nil
        ) {
            self.host = host
            self.port = port
            self.dataDirectory = dataDirectory
            self.limits = limits
            self.durability = durability
            self.appTokens = appTokens
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The accounts.
    public var accounts: any ServerAccounts { storage.accounts }
    /// Where the accounts and the libraries' logs are kept.
    public let storage: any ServerStorage
    let metrics = ServerMetrics()
    /// What the server holds for its clients, within ``ServerLimits/memoryBudget``.
    let budget: MemoryBudget
    let logger: Logger
    let libraries = Mutex<[String: ServedLibrary]>([:])
    /// WebSocket connections of valid tokens, by token, library and address.
    let registry = ConnectionRegistry()
    /// The changes each token or app user may send a second.
    let quota: ChangeQuota
    /// The libraries taken offline, as the account storage said at most about a second ago (or as this server's admin
    /// API made them): what a sync request is checked against, without a query of its own.
    let offline = Mutex<Set<String>>([])
    /// Every accepted TCP connection.
    private let tracker = ConnectionTracker()
    /// Refusals and failed connections, rate-limited.
    private let refusals = RefusalLog()

    /// The task that relays presence frames of other processes.
    let presenceRelay = Mutex<Task<Void, Never>?>(nil)

    /// The data directory's lock, held as long as the server exists.
    private let dataLock: DataDirectoryLock

    /// Opens the data directory (creating it, `libraries/` and the account database when missing) and locks it.
    ///
    /// A new directory is created readable by its owner only (0700), and the databases are made 0600 (see
    /// ``ServerDataDirectory``); an existing directory that group or others may access is used as it is, with a
    /// warning in the log. One server at a time uses a data directory: this takes an exclusive lock on its `lock`
    /// file (which holds the process's id) until the server is released, and fails while another process holds it.
    /// Token commands (``ServerDataDirectory/openAccounts()``) take no lock.
    ///
    /// - Parameters:
    ///   - configuration: where and how the server runs.
    ///   - logger: where the server logs.
    ///   - storage: where the accounts and logs are kept; `nil` for the data directory's own SQLite files
    ///     (``DirectoryStorage``).
    /// - Throws: ``ServerError`` `startup` when another server holds the data directory (the message names it and
    ///   that server's process id); `storage` when it cannot be created or opened.
    public init(
        configuration: Configuration, logger: Logger = Logger(label: "folio.serve"),
        storage: (any ServerStorage)? = nil
    ) throws {
        self.configuration = configuration
        budget = MemoryBudget(limit: configuration.limits.memoryBudget)
        quota = ChangeQuota(perSecond: configuration.limits.changesPerSecond)
        self.logger = logger
        let directory = ServerDataDirectory(configuration.dataDirectory)
        try directory.create()
        dataLock = try directory.lock()
        if directory.isOpenToOthers {
            let why = "it holds token hashes, every document and the server's keys"
            logger.warning(
                "the data directory is open to group or others: chmod 700 it (\(why))",
                metadata: [
                    "directory": .string(directory.url.path),
                    "mode": .string(String(directory.mode ?? 0, radix: 8)),
                ])
        }
        self.storage = try storage ?? DirectoryStorage(directory: directory, durability: configuration.durability)
        let offline = try self.storage.accounts.offlineLibraries().map(\.library)
        self.offline.withLock { $0 = Set(offline) }
        watchOtherProcesses()
    }

    deinit { presenceRelay.withLock { $0?.cancel() } }

    /// Runs until SIGTERM or SIGINT, then stops accepting connections, lets open ones close and returns.
    ///
    /// - Parameter onListening: called with the bound address's port once the server accepts connections.
    /// - Throws: ``ServerError`` `startup` when the address cannot be bound.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let application = makeApplication(onListening: onListening)
        var group = ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A last resort: the server closes every socket at `shutdownGrace` itself (see `makeApplication`).
        group.maximumGracefulShutdownDuration = configuration.limits.shutdownGrace + .seconds(5)
        let services = ServiceGroup(configuration: group)
        do {
            try await services.run()
        } catch {
            throw ServerError(
                .startup, "the server on \(configuration.host):\(configuration.port) stopped", cause: error)
        }
    }

    /// The Hummingbird application, for running inside a service group of the caller's. Besides the HTTP server, it
    /// watches for revoked tokens (closing their connections with 4401), and when the group shuts it down it closes
    /// WebSockets with 1001 and, ``ServerLimits/shutdownGrace`` later, the sockets of every connection still open.
    public func makeApplication(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some Service {
        let router = Router(context: PeerRequestContext.self)
        let storage = self.storage
        router.get("health") { _, _ -> Response in
            if let reason = storage.unhealthyReason {
                return Response(
                    status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "unavailable: \(reason)\n"))
                )
            }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        let metrics = self.metrics
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(storageOutages: storage.outageCount))))
        }
        let limits = configuration.limits
        // A sync request that was not upgraded: refused with the reason the upgrade was.
        router.get("v1/libraries/:library/sync") { request, context -> Response in
            let library = context.parameters.get("library") ?? ""
            let headers = request.headers
            switch await self.authorizeSync(headers, library: library) {
            case .failure(let refusal):
                self.logRefusal(refusal.reason, peer: context.peer, library: library, token: refusal.token)
                return Response(
                    status: refusal.status, body: .init(byteBuffer: ByteBuffer(string: refusal.reason + "\n")))
            case .success where self.registry.count >= limits.connections:
                return Response(
                    status: .serviceUnavailable,
                    body: .init(byteBuffer: ByteBuffer(string: "the server has as many connections as it takes\n")))
            case .success:
                return Response(
                    status: .upgradeRequired,
                    body: .init(byteBuffer: ByteBuffer(string: "this address takes a WebSocket\n")))
            }
        }
        addAdminRoutes(to: router)
        let logger = self.logger
        let refused: @Sendable (String, String) -> Void = { peer, reason in
            self.refusals.warning(
                "connection refused", metadata: ["peer": .string(peer), "reason": .string(reason)], to: logger)
        }
        let settings = ConnectionGuard.Settings(
            requestTimeout: limits.requestTimeout, closeGrace: limits.closeGrace, tracker: tracker,
            admit: { open in
                // Every accepted connection counts until it closes; those that are WebSockets of valid tokens count
                // against the limits of the upgrade instead.
                guard open - self.registry.count > limits.pendingConnections else { return nil }
                self.metrics.connectionsRefused.increment()
                return "more than \(limits.pendingConnections) connections are open without a WebSocket"
            },
            refused: refused)
        let webSocket = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                additionalChannelHandlers: [RequestDeadline(timeout: limits.requestTimeout, refused: refused)],
                idleTimeout: .seconds(60)),
            ws: .init(maxFrameSize: limits.messageBytes, autoPing: .enabled(timePeriod: .seconds(30))))
        let server = HTTPServerBuilder { responder in
            GuardedChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, configuration: webSocket,
                    shouldUpgrade: { head, channel, _ in await self.shouldUpgrade(head, channel: channel) }),
                settings: settings)
        }
        let application = Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "folio"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info(
                    "listening", metadata: ["host": .string(self.configuration.host), "port": .stringConvertible(port)])
                await onListening(port)
            },
            logger: logger
        )
        return ServerService(inner: application, server: self)
    }

    /// Whether a request for a sync path is upgraded, and how the WebSocket is served.
    private func shouldUpgrade(
        _ head: HTTPRequest, channel: any Channel
    ) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard let library = Self.libraryName(inPath: head.path ?? "") else { return .dontUpgrade }
        let peer = channel.remoteAddress?.description ?? "?"
        // A refused upgrade is accepted and closed with a code that says why (4401, 4403, 4503, 1013): the WebSocket
        // layer would otherwise answer any refusal with a bare 400. Nothing of any log is sent.
        let refusal: (code: Int, reason: String, token: String?)
        let headers = head.headerFields
        switch await authorizeSync(headers, library: library) {
        case .failure(let failure):
            let code =
                failure.closeCode
                ?? {
                    switch failure.status {
                    case .forbidden: 4403
                    case .unauthorized: 4401
                    case .serviceUnavailable: 4503
                    default: 1011
                    }
                }()
            refusal = (code, failure.reason, failure.token)
        case .success(let grant) where grant.documents != nil && !Self.readsScope(headers):
            // It would offer the library's other documents, and be closed for it again and again.
            refusal = (
                4403, "the token grants single documents of the library; this client syncs whole libraries only",
                grant.key
            )
        case .success(let grant):
            let address = channel.remoteAddress?.ipAddress ?? peer
            switch registry.admit(grant, address: address, limits: configuration.limits) {
            case .success(let id):
                // Counted out when the channel closes, whether or not the upgrade completes.
                channel.closeFuture.whenComplete { _ in self.registry.release(id) }
                let format = Self.newestFormat(in: head.headerFields)
                let readsPresence = Self.readsPresence(head.headerFields)
                let readsScope = Self.readsScope(head.headerFields)
                // The answer says the server relays presence to the client, which may then send its own.
                var answer = HTTPFields()
                if readsPresence, let name = HTTPField.Name(SyncFrame.presenceHeader) { answer[name] = "1" }
                return .upgrade(answer) { inbound, outbound, _ in
                    await self.serve(
                        grant, connection: id, peer: peer, format: format, readsPresence: readsPresence,
                        readsScope: readsScope, inbound: inbound, outbound: outbound, channel: channel)
                }
            case .failure(let over):
                refusal = (1013, over.reason, grant.key)
            }
        }
        metrics.connectionsRefused.increment()
        logRefusal(refusal.reason, peer: peer, library: library, token: refusal.token, code: refusal.code)
        return .upgrade([:]) { inbound, outbound, _ in
            await Self.afterFirstFrame(of: inbound, within: Self.refusalWait) {
                try? await outbound.close(
                    .init(codeNumber: refusal.code), reason: Outbox.closeFrameReason(refusal.reason))
            }
        }
    }

    /// How long a refused upgrade waits for the client's first frame before its close is sent.
    static let refusalWait: Duration = .seconds(1)

    /// Runs `close` once the client sent its first data frame, its side ended, or `timeout` passed.
    ///
    /// A close sent right behind the upgrade's answer can reach a client in the same read as the answer, and some
    /// clients (swift-websocket's among them) lose a frame that arrives with the answer: the client then waits
    /// for a close that never comes and tries again later instead of learning that its token is refused. A client
    /// that sent a frame has taken the answer, so a close sent after it is read. `close` runs while the frames are
    /// still read (pings answered), before that reading is cancelled: a reading cancelled while it answers a ping
    /// would close the connection itself, with 1011, before `close` could say why.
    static func afterFirstFrame(
        of inbound: WebSocketInboundStream, within timeout: Duration, _ close: () async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var frames = inbound.makeAsyncIterator()
                _ = try? await frames.next()
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            await close()
            group.cancelAll()
        }
    }

    /// One line for a refused request or upgrade (rate-limited): never the secret, the token's id when it is known.
    private func logRefusal(_ reason: String, peer: String, library: String, token: String?, code: Int? = nil) {
        var metadata: Logger.Metadata = [
            "peer": .string(peer), "library": .string(library), "reason": .string(reason),
        ]
        if let token { metadata["token"] = .string(token) }
        if let code { metadata["code"] = .stringConvertible(code) }
        refusals.warning("connection refused", metadata: metadata, to: logger)
    }

    /// SIGTERM or SIGINT: WebSockets are closed with 1001, and every socket still open `shutdownGrace` later is closed.
    func beginShutdown() {
        let grace = configuration.limits.shutdownGrace
        logger.info(
            "stopping", metadata: ["connections": .stringConvertible(tracker.count), "grace": .string("\(grace)")])
        registry.closeAll(code: 1001, reason: "the server is going away")
        let tracker = self.tracker
        let logger = self.logger
        Task {
            try? await Task.sleep(for: grace)
            let open = tracker.count
            guard open > 0 else { return }
            logger.warning(
                "closing the connections still open at the shutdown deadline",
                metadata: ["connections": .stringConvertible(open)])
            tracker.closeAll()
        }
    }

    /// The library named in a sync path, `/v1/libraries/NAME/sync`, when the name is valid.
    static func libraryName(inPath path: String) -> String? {
        let parts = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
        guard parts.count == 4, parts[0] == "v1", parts[1] == "libraries", parts[3] == "sync" else { return nil }
        let name = String(parts[2])
        return AccountNames.isValid(name) ? name : nil
    }

    /// The newest message format the server writes that a client's upgrade request lists among those it reads
    /// (comma-separated format numbers in `SyncMessage.formatsHeader`, any of its lines), or format 2, which every
    /// client reads.
    static func newestFormat(in headers: HTTPFields) -> UInt8 {
        guard let name = HTTPField.Name(SyncMessage.formatsHeader) else { return SyncMessage.formatVersion }
        let listed = headers[values: name].flatMap { value in
            value.split(separator: ",").compactMap { UInt8($0.trimmingCharacters(in: .whitespaces)) }
        }
        return listed.filter { SyncMessage.readableFormats.contains($0) }.max() ?? SyncMessage.formatVersion
    }

    /// Whether a client's upgrade request says it reads presence frames: version 1 listed in `SyncFrame.presenceHeader`
    /// (comma-separated numbers, any of its lines).
    static func readsPresence(_ headers: HTTPFields) -> Bool {
        lists(version: "1", in: SyncFrame.presenceHeader, of: headers)
    }

    /// Whether a client's upgrade request says it reads scope frames: version 1 listed in `SyncScope.header`.
    static func readsScope(_ headers: HTTPFields) -> Bool {
        lists(version: "1", in: SyncScope.header, of: headers)
    }

    /// Whether `version` is among the comma-separated numbers of header `header`, any of its lines.
    private static func lists(version: String, in header: String, of headers: HTTPFields) -> Bool {
        guard let name = HTTPField.Name(header) else { return false }
        return headers[values: name].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == version }
        }
    }

    /// The longest a connection waits for its allowance before a message (``ServerLimits/changesPerSecond``): past it
    /// the connection is closed (1013) rather than kept unread for longer than its pings allow.
    static let longestAllowanceWait: Duration = .seconds(20)

    /// Waits until `grantee`'s allowance is not in debt; false when the connection ended meanwhile, or when the
    /// debt is longer than ``longestAllowanceWait`` (the connection is then closed, 1013: its pings would go
    /// unanswered for longer than a client waits).
    private func awaitAllowance(of grantee: String, outbox: Outbox) async -> Bool {
        while true {
            let wait = quota.debt(of: grantee)
            guard wait > .zero else { return true }
            guard wait <= Self.longestAllowanceWait else {
                outbox.close(code: 1013, reason: "over its allowance of changes a second: try again later")
                return false
            }
            let end = ContinuousClock.now + wait
            while !outbox.hasEnded, !Task.isCancelled, ContinuousClock.now < end {
                try? await Task.sleep(for: min(end - .now, .milliseconds(100)))
            }
            if outbox.hasEnded || Task.isCancelled { return false }
        }
    }

    /// A presence frame with an empty state: its first two bytes (the wire version and the kind) start every presence
    /// frame, and its size is what comes before the state.
    private static let emptyPresence = SyncFrame.presence(
        document: DocumentID(UUIDBytes(bytes: Array(repeating: 0, count: 16))),
        device: DeviceID(UUIDBytes(bytes: Array(repeating: 0, count: 16))), state: []
    ).encoded()

    /// Whether `bytes` are a presence frame whose state is larger than `limit`, judged by its kind and size alone.
    static func isPresence(_ bytes: [UInt8], over limit: Int) -> Bool {
        bytes.starts(with: emptyPresence.prefix(2)) && bytes.count - emptyPresence.count > limit
    }

    /// Serves one WebSocket connection of `grant`'s library until it closes; in message format `format`, with
    /// presence frames when `readsPresence`. A client that `readsScope` is told first what the grant lets it sync
    /// (`SyncFrame.scope`); another, with a `read` grant, that it may only read (`SyncFrame.readOnlyNotice`). A
    /// connection that sends a change or a blob it may not is closed (4405; 4406 for a document outside its scope),
    /// and nothing of what it sent is stored.
    private func serve(
        _ grant: AccessGrant, connection: UInt64, peer: String, format: UInt8, readsPresence: Bool,
        readsScope: Bool, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel
    ) async {
        let name = grant.library
        let metadata: Logger.Metadata = [
            "library": .string(name), "peer": .string(peer), "token": .string(grant.key),
            "role": .string(grant.role.rawValue),
        ]
        let library: ServedLibrary
        do { library = try await Self.offTheLoop { Result { try self.library(name) } }.get() } catch {
            logger.error("cannot open a library", metadata: metadata.merging(["error": .string("\(error)")]) { $1 })
            try? await outbound.close(.unexpectedServerError, reason: "the server cannot open the library")
            return
        }
        metrics.connectionsOpened.increment()
        metrics.connectionsOpen.increment()
        defer { metrics.connectionsOpen.decrement() }
        let limits = configuration.limits
        let outbox = Outbox(limit: limits.queuedFrames, byteLimit: limits.queuedBytes, budget: budget)
        let scope = grant.scope
        let writes = scope.writesAny
        // The first frame, before any answer to the client's hello: the client leaves out what the scope does
        // before it reads the server's hello.
        if readsScope {
            outbox.send(SyncFrame.scope(scope).encoded())
        } else if !writes {
            outbox.send(SyncFrame.readOnlyNotice.encoded())
        }
        let id = await library.connect(
            outbox, peer: peer, format: format, readsPresence: readsPresence, scope: scope, person: grant.person)
        // From now on a revocation or the server's shutdown closes it through its outbox.
        registry.attach(connection, outbox: outbox)
        // Once its socket has closed, nothing waits for the connection any more: not the reader for its queue to
        // drain (the writer takes nothing from it now), nor a message for room in the memory budget.
        channel.closeFuture.whenComplete { _ in outbox.finish() }
        logger.info("connection opened", metadata: metadata)
        let metrics = self.metrics
        let logger = self.logger
        // Once a close is asked for, the connection has `closeGrace` to end by itself; then its socket is closed,
        // which ends the reader and a writer waiting on a full socket.
        let grace = limits.closeGrace
        let watchdog = Task {
            for await _ in outbox.closeRequests {
                try? await Task.sleep(for: grace)
                guard !Task.isCancelled else { return }
                logger.warning("connection did not close within the grace; closing its socket", metadata: metadata)
                channel.close(promise: nil)
                return
            }
        }
        defer { watchdog.cancel() }
        // A hello must arrive within `helloTimeout` of the upgrade: a connection that only answers pings would otherwise
        // hold its slot for ever.
        let greeted = Atomic<Bool>(false)
        let helloTimeout = limits.helloTimeout
        let helloTimer = Task {
            try? await Task.sleep(for: helloTimeout)
            guard !Task.isCancelled, !greeted.load(ordering: .acquiring) else { return }
            outbox.close(code: 1008, reason: "no hello within \(helloTimeout)")
        }
        defer { helloTimer.cancel() }
        await withTaskGroup(of: Void.self) { group in
            // The writer: queued frames, then the close asked for, if any.
            group.addTask {
                for await frame in outbox.frames {
                    outbox.taken(frame)
                    if outbox.requestedClose != nil { break }
                    do { try await outbound.write(.binary(ByteBuffer(bytes: frame.bytes))) } catch {
                        // The socket is gone: the queue ends, which lets the reader's waits go.
                        outbox.finish()
                        break
                    }
                }
                if let close = outbox.requestedClose {
                    try? await outbound.close(
                        .init(codeNumber: Int(close.code)), reason: Outbox.closeFrameReason(close.reason))
                }
            }
            // The reader.
            do {
                reading: for try await message in inbound.messages(maxSize: limits.messageBytes) {
                    // Asked to close (a revoked token, the server stopping): nothing more is taken from it. A socket
                    // the client closed still gives what arrived before its close.
                    if outbox.requestedClose != nil { break }
                    guard case .binary(let buffer) = message else {
                        outbox.close(code: 1003, reason: "the sync protocol uses binary frames only")
                        break
                    }
                    metrics.bytesIn.increment(by: Int64(buffer.readableBytes))
                    let bytes = Array(buffer.readableBytesView)
                    let frame: SyncFrame
                    do { frame = try SyncFrame(decoding: bytes) } catch {
                        if Self.isPresence(bytes, over: limits.presenceBytes) {
                            // A state past what the decoder takes is past the server's bound too.
                            outbox.close(
                                code: 1009, reason: "a presence state is larger than \(limits.presenceBytes) bytes")
                        } else {
                            outbox.close(code: 1002, reason: "a frame does not decode: \(error)")
                        }
                        break
                    }
                    switch frame {
                    case .message(let channel, let inner):
                        let message: SyncMessage
                        do { message = try SyncMessage(decoding: inner) } catch {
                            outbox.close(code: 1002, reason: "a frame does not decode: \(error)")
                            break reading
                        }
                        // Anything else before a hello is refused by the library (1002).
                        if case .hello = message { greeted.store(true, ordering: .releasing) }
                        if !writes, message.isUpload {
                            outbox.close(code: 4405, reason: "this token may read the library, not write to it")
                            break reading
                        }
                        // Taken from the grantee's allowance as it arrives; the next frame waits for the debt.
                        quota.charge(grant.key, cost: message.quotaCost)
                        await library.receive(message, size: bytes.count, format: inner[0], channel: channel, from: id)
                    case .presence(let document, let device, let state):
                        // Relayed and kept in memory, never stored; no session's message.
                        await library.receivePresence(document: document, device: device, state: state, from: id)
                    case .notice:
                        outbox.close(code: 1002, reason: "a client does not send notices")
                        break reading
                    case .scope:
                        outbox.close(code: 1002, reason: "a client does not send scopes")
                        break reading
                    }
                    // A client that does not take what it was sent is not read either, so that its requests cannot
                    // pile up replies in the server's memory; past the stall timeout it is closed.
                    if outbox.isBusy { await outbox.waitUntilDrained(orCloseAfter: limits.stallTimeout) }
                    // Nothing more is read from a grantee in debt (this connection, or another of theirs, sent more
                    // than their allowance): from the message after the hello on, so that a new connection brings
                    // nothing in unpaid either.
                    if greeted.load(ordering: .acquiring) {
                        guard await awaitAllowance(of: grant.key, outbox: outbox) else { break }
                    }
                    if outbox.requestedClose != nil { break }
                }
            } catch {
                // WSCore says "too large" only through an error of its own: a message over the bound made of
                // fragments (one frame over it is refused by the frame decoder, with 1009 too).
                if "\(error)".contains("messageTooLarge") {
                    outbox.close(code: 1009, reason: "a message is larger than \(limits.messageBytes) bytes")
                } else {
                    logger.debug(
                        "connection read failed", metadata: metadata.merging(["error": .string("\(error)")]) { $1 })
                }
            }
            if let close = outbox.requestedClose {
                logger.warning(
                    "connection closed by the server",
                    metadata: metadata.merging([
                        "code": .stringConvertible(close.code), "reason": .string(close.reason),
                    ]) { $1 })
            }
            await library.disconnect(id)
            outbox.finish()
            await group.waitForAll()
        }
        logger.info("connection closed", metadata: metadata)
    }
}

/// The request context of the server's routes: Hummingbird's, and the peer's address for the log.
struct PeerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's address and port.
    let peer: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.description ?? "?"
    }
}

/// The application, with the server's own work around it: the revocation watch, and the shutdown deadline.
struct ServerService<Inner: Service>: Service {
    let inner: Inner
    let server: SyncServer

    func run() async throws {
        let server = self.server
        let watch = Task { await server.watchRevocations() }
        defer { watch.cancel() }
        try await withGracefulShutdownHandler {
            try await inner.run()
        } onGracefulShutdown: {
            server.beginShutdown()
        }
    }
}
