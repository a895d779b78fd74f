import FolioCore
import FolioSync
import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing
import WSClient

/// A WebSocket client that sends whatever a test gives it, to see how the server answers hostile input.
struct RawClient {
    /// What happened: the frames the server sent, and its close frame's code and reason.
    struct Outcome: Sendable {
        var received: [[UInt8]] = []
        var closeCode: UInt16?
        var reason: String?
    }

    let url: String
    let token: String

    init(_ server: URL, token: String) {
        url = server.absoluteString + "/sync"
        self.token = token
    }

    /// Connects, sends `messages` (each as a binary WebSocket message, or text for `.text`), reads until the server
    /// closes the connection or `linger` passes, and returns what came back. Expecting a close, give a long `linger`:
    /// the wait ends as soon as the server closes.
    func run(_ messages: [Message], linger: Duration = .seconds(60)) async throws -> Outcome {
        let outcome = Collected()
        // An event loop of its own: another connection's large writes (masked byte by byte in a debug build) never
        // hold up this one's connect.
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = WebSocketClient(
            url: url, configuration: configuration(), eventLoopGroup: loop, logger: Logger(label: "raw")
        ) {
            inbound, outbound, _ in
            try await Self.send(messages, to: outbound)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound.messages(maxSize: 32 << 20) {
                            if case .binary(let buffer) = message {
                                outcome.state.withLock { $0.received.append(Array(buffer.readableBytesView)) }
                            }
                        }
                    } catch {}
                }
                group.addTask { try? await Task.sleep(for: linger) }
                // Whichever ends first: the server's close, or the wait.
                await group.next()
                group.cancelAll()
            }
        }
        let close: WebSocketCloseFrame?
        do {
            close = try await client.run()
        } catch {
            try? await loop.shutdownGracefully()
            throw error
        }
        try? await loop.shutdownGracefully()
        return outcome.state.withLock { value in
            if let close {
                switch close.closeCode {
                case .normalClosure: value.closeCode = 1000
                case .goingAway: value.closeCode = 1001
                case .protocolError: value.closeCode = 1002
                case .unacceptableData: value.closeCode = 1003
                case .dataInconsistentWithMessage: value.closeCode = 1007
                case .policyViolation: value.closeCode = 1008
                case .messageTooLarge: value.closeCode = 1009
                case .unexpectedServerError: value.closeCode = 1011
                case .unknown(let code): value.closeCode = code
                default: value.closeCode = 0
                }
                value.reason = close.reason
            }
            return value
        }
    }

    enum Message {
        case binary([UInt8])
        case text(String)
    }

    /// Its bearer token, large frames, no pings of its own.
    private func configuration() -> WebSocketClientConfiguration {
        var configuration = WebSocketClientConfiguration(
            maxFrameSize: 32 << 20, additionalHeaders: [.authorization: "Bearer \(token)"])
        configuration.autoPing = .disabled
        return configuration
    }

    private static func send(_ messages: [Message], to outbound: WebSocketOutboundWriter) async throws {
        for message in messages {
            switch message {
            case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
            case .text(let text): try await outbound.write(.text(text))
            }
        }
    }

    /// Connects, sends `messages`, then never reads again (a client that stalled) until `duration` passes or the
    /// task is cancelled.
    func stall(after messages: [Message], for duration: Duration) async throws {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = WebSocketClient(
            url: url, configuration: configuration(), eventLoopGroup: loop, logger: Logger(label: "stalled")
        ) {
            _, outbound, _ in
            try await Self.send(messages, to: outbound)
            try? await Task.sleep(for: duration)
        }
        _ = try? await client.run()
        try? await loop.shutdownGracefully()
    }

    /// The close code of a connection the server refuses at the upgrade, as a client that opens with its hello sees
    /// it (nil if the connection ends without a close frame). The connection must have received no frame of any log.
    func refusedCloseCode() async throws -> UInt16? {
        let outcome = try await run([.binary(HandDevice().hello())], linger: .seconds(30))
        #expect(outcome.received.isEmpty, "a refused connection received a frame")
        return outcome.closeCode
    }
}

/// A device that speaks the protocol by hand: its key, a store of its own changes, and the frames it sends.
struct HandDevice {
    let key = DeviceKey()
    let channel: UInt64 = 7
    var device: Device { key.device(named: "hand") }

    /// Its opening hello on `channel`, announcing nothing.
    func hello() -> [UInt8] {
        SyncFrame.encode(.hello(SyncHello(device: device, session: channel, vectors: [:])), on: channel)
    }

    /// A `changes` message of `changes`, each vouched for by a head this device signs.
    func changes(_ changes: [Change], of document: DocumentID) -> [UInt8] {
        let heads = changes.suffix(1).map { SignedHead(signing: $0, with: key) }
        return SyncFrame.encode(
            .changes(document: document, changes: changes.map(EncodedChange.init), heads: heads), on: channel)
    }

    /// A change of this device made by hand (a lying client may claim anything).
    func change(
        seq: UInt64, of document: DocumentID, parents: [Change] = [], lamport: UInt64, text: String = "hand",
        kind: ChangeKind? = nil, blobs: [BlobReference] = []
    ) -> Change {
        var vector = parents.reduce(VersionVector()) { $0.merging($1.vector) }
        vector[key.id] = seq
        return Change(
            document: document, id: ChangeID(device: key.id, seq: seq), parents: parents.map(\.hash), vector: vector,
            lamport: lamport, wallTime: Timestamp(millisecondsSince1970: 1_700_000_000_000),
            kind: kind ?? .lifecycle(.create(name: text, type: "public.plain-text", container: .shared)), blobs: blobs)
    }
}

/// What a raw client collected, shared with its reader task.
private final class Collected: Sendable {
    let state = Mutex(RawClient.Outcome())
}
