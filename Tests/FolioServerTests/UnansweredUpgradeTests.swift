import Folio
import FolioClient
import FolioSync
import FolioTesting
import FolioToolRunner
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc

    /// A server that dies between reading a client's WebSocket upgrade and answering it (a process killed at that
    /// moment) leaves the client's socket half closed: the client must give the attempt up rather than wait for ever.
    @Suite struct UnansweredUpgradeTests {
        /// A one-shot sync fails within its accept timeout, with a reason.
        @Test func aSyncWhoseUpgradeIsNeverAnsweredFails() async throws {
            let listener = try MuteListener()
            defer { listener.stop() }
            let directory = try TemporaryDirectory()
            let library = try DocumentLibrary(at: try directory.subdirectory("device"), deviceName: "device")
            let transport = WebSocketTransport(
                endpoint: try ServerEndpoint(url: listener.libraryURL, token: "tok_unanswered"),
                acceptTimeout: .seconds(2))
            // Any finite bound tells an attempt given up from one that waits for ever; a generous one, as the whole
            // suite's load can hold the cooperative pool for a minute or more.
            let outcome = try await Self.within(.seconds(300)) {
                do {
                    _ = try await library.sync(through: transport)
                    return "the sync returned"
                } catch {
                    return "\(error)"
                }
            }
            let message = try #require(outcome, "the sync still waited 300 s after the server closed its side")
            #expect(message.contains("did not accept the connection within 2.0 seconds"), "\(message)")
            #expect(listener.requests >= 1, "the client's upgrade request reached the listener")
        }

        /// A live sync whose connection waits for an answer stops at once when asked to.
        @Test func aLiveSyncWaitingForAnUnansweredUpgradeStops() async throws {
            let listener = try MuteListener()
            defer { listener.stop() }
            let directory = try TemporaryDirectory()
            let library = try DocumentLibrary(at: try directory.subdirectory("device"), deviceName: "device")
            let sync = try await library.startSyncing(with: listener.libraryURL, token: "tok_unanswered")
            // The request is read and the listener's side closed: the connection now waits for an answer.
            let deadline = ContinuousClock.now + .seconds(300)
            while listener.requests == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(listener.requests >= 1, "the live sync's upgrade request reached the listener")
            let stopped = try await Self.within(.seconds(300)) { await sync.stop() }
            #expect(stopped != nil, "stopping the live sync still waited 300 s later")
        }

        /// `body`'s result, or `nil` when it has not returned within `limit` (it is then left running).
        static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T) async throws -> T?
        {
            let result = Mutex<T?>(nil)
            let task = Task {
                let value = await body()
                result.withLock { $0 = value }
            }
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if let value = result.withLock({ $0 }) { return value }
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = task
            return result.withLock { $0 }
        }
    }

    /// A loopback TCP listener that reads each connection's HTTP request, then closes the connection without answering,
    /// as a server killed at that moment does.
    private final class MuteListener: Sendable {
        private let socket: Int32
        let port: Int
        private let state = Mutex((requests: 0, stopped: false))

        var requests: Int { state.withLock { $0.requests } }
        var libraryURL: URL { URL(string: "ws://127.0.0.1:\(port)/v1/libraries/notes")! }

        init() throws {
            let listening = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard listening >= 0 else { throw POSIXError(.EIO) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, size) }
            }
            guard bound == 0, listen(listening, 16) == 0 else {
                close(listening)
                throw POSIXError(.EADDRINUSE)
            }
            var length = size
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) }
            }
            socket = listening
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread { [self] in self.serve() }.start()
        }

        private func serve() {
            while true {
                let connection = accept(socket, nil, nil)
                guard connection >= 0 else {
                    // `stop()` shut the socket down: it is closed here, once nothing waits on it any more.
                    close(socket)
                    return
                }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !request.ends(with: Array("\r\n\r\n".utf8)) {
                    let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    request += buffer[..<count]
                }
                state.withLock { $0.requests += 1 }
                close(connection)
            }
        }

        /// Stops accepting: `accept` then fails, and the listening thread closes the socket.
        func stop() {
            let first = state.withLock { state in
                defer { state.stopped = true }
                return !state.stopped
            }
            if first { shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }

    extension Array where Element: Equatable {
        fileprivate func ends(with suffix: [Element]) -> Bool {
            count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
        }
    }
#endif
