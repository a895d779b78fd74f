import FolioCore
import FolioStore
import FolioSync
import Foundation
import HTTPTypes
import Hummingbird
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
/// - `GET /health`: `ok` while the server runs.
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

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL,
            limits: ServerLimits = ServerLimits(), durability: Durability = .normal
        ) {
            self.host = host
            self.port = port
            self.dataDirectory = dataDirectory
            self.limits = limits
            self.durability = durability
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The accounts.
    public let accounts: AccountStore
    let metrics = ServerMetrics()
    private let logger: Logger
    private let libraries = Mutex<[String: ServedLibrary]>([:])
    private let openConnections = Atomic<Int>(0)

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
    /// - Throws: ``ServerError`` `startup` when another server holds the data directory (the message names it and
    ///   that server's process id); `storage` when it cannot be created or opened.
    public init(configuration: Configuration, logger: Logger = Logger(label: "folio.serve")) throws {
        self.configuration = configuration
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
        accounts = try directory.openAccounts()
    }

    /// Runs until SIGTERM or SIGINT, then stops accepting connections, lets open ones close and returns.
    ///
    /// - Parameter onListening: called with the bound address's port once the server accepts connections.
    /// - Throws: ``ServerError`` `startup` when the address cannot be bound.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let application = makeApplication(onListening: onListening)
        let group = ServiceGroup(
            configuration: .init(
                services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            throw ServerError(
                .startup, "the server on \(configuration.host):\(configuration.port) stopped", cause: error)
        }
    }

    /// The Hummingbird application, for running inside a service group of the caller's.
    public func makeApplication(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some Service {
        let router = Router()
        router.get("health") { _, _ in "ok\n" }
        let metrics = self.metrics
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        // A sync request that was not upgraded: refused with the reason the upgrade was.
        router.get("v1/libraries/:library/sync") { request, context -> Response in
            let library = context.parameters.get("library") ?? ""
            switch self.authorize(request.headers, library: library) {
            case .failure(let refusal):
                return Response(
                    status: refusal.status, body: .init(byteBuffer: ByteBuffer(string: refusal.reason + "\n")))
            case .success where self.openConnections.load(ordering: .relaxed) >= self.configuration.limits.connections:
                return Response(
                    status: .serviceUnavailable,
                    body: .init(byteBuffer: ByteBuffer(string: "the server has as many connections as it takes\n")))
            case .success:
                return Response(
                    status: .upgradeRequired,
                    body: .init(byteBuffer: ByteBuffer(string: "this address takes a WebSocket\n")))
            }
        }
        let limits = configuration.limits
        let logger = self.logger
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(
                configuration: .init(
                    http1: .init(idleTimeout: .seconds(60)),
                    ws: .init(maxFrameSize: limits.messageBytes, autoPing: .enabled(timePeriod: .seconds(30)))
                )
            ) { head, channel, _ in
                guard let library = Self.libraryName(inPath: head.path ?? "") else { return .dontUpgrade }
                // A refused upgrade is accepted and closed at once with a code that says why (4401, 4403, 1013): the
                // WebSocket layer would otherwise answer any refusal with a bare 400. Nothing of any log is sent.
                let refusal: (code: Int, reason: String)?
                var granted: AccountStore.Token?
                switch self.authorize(head.headerFields, library: library) {
                case .failure(let failure):
                    refusal = (
                        failure.status == .forbidden ? 4403 : failure.status == .unauthorized ? 4401 : 1011,
                        failure.reason
                    )
                case .success(let token):
                    granted = token
                    if self.openConnections.add(1, ordering: .relaxed).newValue <= limits.connections {
                        refusal = nil
                        // Counted down when the channel closes, whether or not the upgrade completes.
                        channel.closeFuture.whenComplete { _ in self.openConnections.subtract(1, ordering: .relaxed) }
                    } else {
                        self.openConnections.subtract(1, ordering: .relaxed)
                        refusal = (1013, "the server has as many connections as it takes")
                    }
                }
                if let refusal {
                    self.metrics.connectionsRefused.increment()
                    return .upgrade([:]) { _, outbound, _ in
                        try? await outbound.close(.init(codeNumber: refusal.code), reason: refusal.reason)
                    }
                }
                guard let token = granted else { return .dontUpgrade }
                let peer = channel.remoteAddress?.description ?? "?"
                return .upgrade([:]) { inbound, outbound, _ in
                    await self.serve(
                        library: token.library, peer: peer, inbound: inbound, outbound: outbound, channel: channel)
                }
            },
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
    }

    /// Why a sync request is refused, and its HTTP status.
    struct Refusal: Error {
        var status: HTTPResponse.Status
        var reason: String
    }

    /// Checks the bearer token against `library`.
    func authorize(_ headers: HTTPFields, library: String) -> Result<AccountStore.Token, Refusal> {
        guard let value = headers[.authorization], value.hasPrefix("Bearer ") else {
            return .failure(Refusal(status: .unauthorized, reason: "a bearer token is required"))
        }
        let token: AccountStore.Token?
        do { token = try accounts.authenticate(String(value.dropFirst("Bearer ".count))) } catch {
            logger.error("the account database failed", metadata: ["error": .string("\(error)")])
            return .failure(Refusal(status: .internalServerError, reason: "the server cannot check tokens"))
        }
        guard let token else { return .failure(Refusal(status: .unauthorized, reason: "the token is not valid")) }
        guard token.library == library else {
            return .failure(Refusal(status: .forbidden, reason: "the token does not grant this library"))
        }
        return .success(token)
    }

    /// The library named in a sync path, `/v1/libraries/NAME/sync`, when the name is valid.
    static func libraryName(inPath path: String) -> String? {
        let parts = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
        guard parts.count == 4, parts[0] == "v1", parts[1] == "libraries", parts[3] == "sync" else { return nil }
        let name = String(parts[2])
        return AccountStore.isValidName(name) ? name : nil
    }

    /// The library `name`, opened at its first connection.
    func library(_ name: String) throws -> ServedLibrary {
        try libraries.withLock { open in
            if let library = open[name] { return library }
            let directory = ServerDataDirectory(configuration.dataDirectory)
            let url = try directory.libraryFile(name, logger: logger)
            let log = try SQLiteServerLog(at: url, durability: configuration.durability)
            try ServerDataDirectory.makePrivate(databaseAt: url)
            var seed = SystemRandomNumberGenerator()
            let library = ServedLibrary(
                name: name, log: log, accounts: accounts, metrics: metrics, logger: logger,
                limits: configuration.limits, seed: seed.next())
            open[name] = library
            return library
        }
    }

    /// Serves one WebSocket connection of `library` until it closes.
    private func serve(
        library name: String, peer: String, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        channel: any Channel
    ) async {
        let library: ServedLibrary
        do { library = try self.library(name) } catch {
            logger.error("cannot open a library", metadata: ["library": .string(name), "error": .string("\(error)")])
            try? await outbound.close(.unexpectedServerError, reason: "the server cannot open the library")
            return
        }
        metrics.connectionsOpened.increment()
        metrics.connectionsOpen.increment()
        defer { metrics.connectionsOpen.decrement() }
        let outbox = Outbox(limit: configuration.limits.queuedFrames, byteLimit: configuration.limits.queuedBytes)
        let id = await library.connect(outbox, peer: peer)
        let metrics = self.metrics
        let logger = self.logger
        // Once a close is asked for, the connection has `closeGrace` to end by itself; then its socket is closed,
        // which ends the reader and a writer waiting on a full socket.
        let grace = configuration.limits.closeGrace
        let watchdog = Task {
            for await _ in outbox.closeRequests {
                try? await Task.sleep(for: grace)
                guard !Task.isCancelled else { return }
                logger.warning(
                    "connection did not close within the grace; closing its socket",
                    metadata: ["library": .string(name), "peer": .string(peer)])
                channel.close(promise: nil)
                return
            }
        }
        defer { watchdog.cancel() }
        await withTaskGroup(of: Void.self) { group in
            // The writer: queued frames, then the close asked for, if any.
            group.addTask {
                for await frame in outbox.frames {
                    outbox.taken(frame)
                    if outbox.requestedClose != nil { break }
                    do { try await outbound.write(.binary(ByteBuffer(bytes: frame.bytes))) } catch { break }
                }
                if let close = outbox.requestedClose {
                    try? await outbound.close(
                        .init(codeNumber: Int(close.code)), reason: Outbox.closeFrameReason(close.reason))
                }
            }
            // The reader.
            do {
                for try await message in inbound.messages(maxSize: configuration.limits.messageBytes) {
                    guard case .binary(let buffer) = message else {
                        outbox.close(code: 1003, reason: "the sync protocol uses binary frames only")
                        break
                    }
                    metrics.bytesIn.increment(by: Int64(buffer.readableBytes))
                    let bytes = Array(buffer.readableBytesView)
                    let decoded: (channel: UInt64, message: SyncMessage, bytes: [UInt8])
                    do {
                        guard case .message(let channel, let inner) = try SyncFrame(decoding: bytes) else {
                            outbox.close(code: 1002, reason: "a client does not send notices")
                            break
                        }
                        decoded = (channel, try SyncMessage(decoding: inner), inner)
                    } catch {
                        outbox.close(code: 1002, reason: "a frame does not decode: \(error)")
                        break
                    }
                    await library.receive(decoded.message, bytes: decoded.bytes, channel: decoded.channel, from: id)
                    // A client that does not take what it was sent is not read either, so that its requests cannot
                    // pile up replies in the server's memory; past the stall timeout it is closed.
                    if outbox.isBusy { await outbox.waitUntilDrained(orCloseAfter: configuration.limits.stallTimeout) }
                    if outbox.requestedClose != nil { break }
                }
            } catch {
                logger.debug("connection read failed", metadata: ["error": .string("\(error)")])
            }
            if let close = outbox.requestedClose {
                logger.warning(
                    "connection refused a frame",
                    metadata: [
                        "library": .string(name), "peer": .string(peer), "code": .stringConvertible(close.code),
                        "reason": .string(close.reason),
                    ])
            }
            await library.disconnect(id)
            outbox.finish()
            await group.waitForAll()
        }
        logger.info("connection closed", metadata: ["library": .string(name), "peer": .string(peer)])
    }
}
