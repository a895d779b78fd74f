import FolioCore
import FolioSync
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Synchronization
import WSClient

/// A WebSocket client held open while a test sends frames one at a time and looks at what has arrived, until the test
/// closes it or the server does.
final class OpenClient: Sendable {
    /// A presence frame received.
    struct Presence: Hashable, Sendable {
        var document: DocumentID
        var device: DeviceID
        var state: [UInt8]
    }

    private struct State {
        var received: [[UInt8]] = []
        var closeCode: UInt16?
        var reason: String?
        var ended = false
        /// Why the connection failed, if it did without a close (it could not connect or upgrade).
        var failure: String?
    }

    /// What arrived, shared with the connection's tasks.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()
    /// What the test sends; nil closes the connection.
    private let outgoing: AsyncStream<[UInt8]?>.Continuation
    private let running = Mutex<Task<Void, Never>?>(nil)

    /// Connects to `library` with `token`, saying at the upgrade that it reads presence when `readsPresence`, and
    /// sends `first` (a hello, usually) once connected.
    init(_ library: URL, token: String, readsPresence: Bool = true, sending first: [[UInt8]] = []) {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8]?.self)
        outgoing = continuation
        for frame in first { continuation.yield(frame) }
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if readsPresence { headers[HTTPField.Name(SyncFrame.presenceHeader)!] = "1" }
        var configuration = WebSocketClientConfiguration(maxFrameSize: 32 << 20, additionalHeaders: headers)
        configuration.autoPing = .disabled
        let client = WebSocketClient(
            url: library.absoluteString + "/sync", configuration: configuration, logger: Logger(label: "open")
        ) { [shared] inbound, outbound, _ in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound.messages(maxSize: 32 << 20) {
                            if case .binary(let buffer) = message {
                                shared.state.withLock { $0.received.append(Array(buffer.readableBytesView)) }
                            }
                        }
                    } catch {}
                    // The server closed: nothing more is written.
                    continuation.yield(nil)
                }
                for await frame in stream {
                    guard let frame else { break }
                    do { try await outbound.write(.binary(ByteBuffer(bytes: frame))) } catch { break }
                }
                group.cancelAll()
            }
        }
        let task = Task { [shared] in
            let close: WebSocketCloseFrame?
            let failure: String?
            do {
                (close, failure) = (try await client.run(), nil)
            } catch {
                (close, failure) = (nil, "\(error)")
            }
            shared.state.withLock { value in
                value.ended = true
                value.failure = failure
                guard let close else { return }
                switch close.closeCode {
                case .normalClosure: value.closeCode = 1000
                case .goingAway: value.closeCode = 1001
                case .protocolError: value.closeCode = 1002
                case .policyViolation: value.closeCode = 1008
                case .messageTooLarge: value.closeCode = 1009
                case .unknown(let code): value.closeCode = code
                default: value.closeCode = 0
                }
                value.reason = close.reason
            }
        }
        running.withLock { $0 = task }
    }

    deinit { outgoing.finish() }

    /// Sends `frame`.
    func send(_ frame: [UInt8]) { outgoing.yield(frame) }

    /// Closes the connection (a normal close) and waits until it has ended.
    func close() async {
        outgoing.yield(nil)
        await running.withLock { $0 }?.value
    }

    /// Why the connection failed, if it did without a close (it could not connect or upgrade).
    var failure: String? { shared.state.withLock { $0.failure } }

    /// Every binary message received so far, in order.
    var received: [[UInt8]] { shared.state.withLock { $0.received } }

    /// The presence frames received so far, in order, but the server's welcome (``welcomes``).
    var presences: [Presence] {
        received.compactMap { bytes in
            guard let frame = try? SyncFrame(decoding: bytes), frame != SyncFrame.presenceWelcome,
                case .presence(let document, let device, let state) = frame
            else {
                return nil
            }
            return Presence(document: document, device: device, state: state)
        }
    }

    /// Where the server's welcome to presence (`SyncFrame.presenceWelcome`) came among the presence frames received:
    /// their indexes.
    var welcomes: [Int] {
        received.compactMap { try? SyncFrame(decoding: $0) }.filter {
            if case .presence = $0 { true } else { false }
        }.enumerated().compactMap { $0.element == SyncFrame.presenceWelcome ? $0.offset : nil }
    }

    /// The notices received so far, in order.
    var notices: [DocumentID] {
        received.compactMap { bytes in
            guard case .notice(let document, _)? = try? SyncFrame(decoding: bytes) else { return nil }
            return document
        }
    }

    /// Whether the connection has ended.
    var hasEnded: Bool { shared.state.withLock { $0.ended } }

    /// The code of the server's close frame, once the connection has ended with one.
    var closeCode: UInt16? { shared.state.withLock { $0.closeCode } }

    /// The reason of the server's close frame.
    var reason: String? { shared.state.withLock { $0.reason } }
}
