import FolioClient
import FolioCore
import FolioServer
import FolioStore
import FolioSync
import FolioToolRunner
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `folio serve` under attack at the HTTP and connection level (issue 36): every test runs a real server with short
/// limits given by its flags, and talks to it over raw sockets where a client library would be too polite.
@Suite(.serialized) struct ConnectionHardeningTests {
    // MARK: Requests that never finish, or do not parse

    /// A connection that sends nothing, or drips its request's head, is answered 408 and closed at the request timeout.
    @Test func aSilentOrDrippingConnectionIsAnswered408AtTheRequestTimeout() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--request-timeout", "1"])
        let port = fixture.server.port
        let (silent, dripped) = try await offThePool {
            let silent = try RawSocket(port: port).readUntilClosed(within: .seconds(5))
            let dripping = try RawSocket(port: port)
            let started = ContinuousClock.now
            for byte in Array("GET /health HTTP/1.1\r\nHost: x\r\n".utf8) {
                guard dripping.send([byte]), ContinuousClock.now - started < .seconds(4) else { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return (silent, dripping.readUntilClosed(within: .seconds(5)))
        }
        for (what, answer) in [("silent", silent), ("dripped", dripped)] {
            #expect(answer.text.hasPrefix("HTTP/1.1 408"), "\(what): \(answer.text)")
            #expect(answer.end == .closed, "\(what): \(answer.end)")
            #expect(answer.elapsed < .seconds(3), "\(what) closed after \(answer.elapsed)")
        }
        #expect(try await fixture.get("/health").body == "ok\n")
    }

    /// What is not an HTTP/1.1 request the server takes (garbage, TLS, HTTP/2, request smuggling shapes, a header over
    /// 80 KiB) is answered 400 at once and closed.
    @Test func malformedRequestsAreAnswered400AndClosed() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--request-timeout", "30"])
        let port = fixture.server.port
        let attacks: [(String, [UInt8])] = [
            ("a garbage request line", Array("GARBAGE\r\n\r\n".utf8)),
            ("a TLS client hello", [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03]),
            ("the HTTP/2 preface", Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)),
            (
                "Content-Length and Transfer-Encoding",
                Array(
                    "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                        .utf8)
            ),
            (
                "two Content-Lengths",
                Array("POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello".utf8)
            ),
            (
                "an 81 KiB header",
                Array(
                    "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 81 << 10))\r\n\r\n".utf8)
            ),
        ]
        for (what, bytes) in attacks {
            let answer = try await offThePool {
                let socket = try RawSocket(port: port)
                _ = socket.send(bytes)
                return socket.readUntilClosed(within: .seconds(10))
            }
            #expect(answer.text.hasPrefix("HTTP/1.1 400"), "\(what): \(answer.text.prefix(80))")
            #expect(answer.end == .closed, "\(what): \(answer.end)")
            #expect(answer.elapsed < .seconds(3), "\(what): closed after \(answer.elapsed)")
        }
    }

    /// A chunked body dripped to `/health` (answered before its body is read) does not hold the connection past the
    /// request timeout.
    @Test func aDrippedBodyIsCutOffAtTheRequestTimeout() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--request-timeout", "1"])
        let port = fixture.server.port
        let answer = try await offThePool {
            let socket = try RawSocket(port: port)
            _ = socket.send(Array("GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            let started = ContinuousClock.now
            while ContinuousClock.now - started < .seconds(6), socket.send(Array("1\r\na\r\n".utf8)) {
                if socket.isClosedByPeer(within: .milliseconds(200)) { break }
            }
            return (socket.readUntilClosed(within: .seconds(2)), ContinuousClock.now - started)
        }
        #expect(answer.1 < .seconds(4), "the connection was held \(answer.1)")
    }

    /// Connections that are not WebSockets of a valid token are capped: past the cap a new connection is closed at
    /// once, and every accepted connection counts, so silent sockets cannot take the server's descriptors.
    @Test func connectionsWithoutAWebSocketAreCapped() async throws {
        let fixture = try await ServerFixture.start(arguments: [
            "--max-pending-connections", "4", "--request-timeout", "30",
        ])
        let port = fixture.server.port
        let refusedBefore = try await fixture.metric("folio_connections_refused_total") ?? 0
        let (held, refused) = try await offThePool {
            let held = try (0..<4).map { _ in try RawSocket(port: port) }
            Thread.sleep(forTimeInterval: 0.3)
            let refused = try RawSocket(port: port).readUntilClosed(within: .seconds(5))
            return (held, refused)
        }
        #expect(refused.bytes.isEmpty && refused.end != .timedOut, "\(refused)")
        #expect(refused.elapsed < .seconds(2))
        for socket in held { socket.close() }
        try await eventually(within: .seconds(5), "the held connections to be counted out") {
            (try? await fixture.get("/health").body) == "ok\n"
        }
        #expect(try await fixture.metric("folio_connections_refused_total") ?? 0 > refusedBefore)
    }

    // MARK: Shutdown

    /// SIGTERM: WebSockets are closed with 1001, and the server exits within its shutdown grace whatever clients do
    /// (silent sockets, a keep-alive, a WebSocket that never answers the close).
    @Test func sigtermClosesWebSocketsWith1001AndExitsWithinTheGrace() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--shutdown-grace", "2", "--request-timeout", "60"])
        let port = fixture.server.port
        let token = try await fixture.token(for: "notes")
        let listening = try RawWebSocket(port: port, library: "notes", token: token)
        let deaf = try RawWebSocket(port: port, library: "notes", token: token)
        let hello = HandDevice().hello()
        #expect(listening.upgraded && deaf.upgraded)
        _ = listening.socket.send(RawWebSocket.frame(opcode: 2, hello))
        _ = deaf.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        let silent = try (0..<20).map { _ in try RawSocket(port: port) }
        try await eventually(within: .seconds(10), "both WebSockets to be open") {
            try await fixture.metric("folio_connections_open") == 2
        }
        let server = fixture.server
        let (exited, close) = try await offThePool {
            let started = ContinuousClock.now
            server.send(SIGTERM)
            let close = listening.closeCode(within: .seconds(10))
            let run = server.wait()
            return (ContinuousClock.now - started, (close, run.status))
        }
        _ = (silent, deaf)
        #expect(close.0 == 1001, "close code \(String(describing: close.0))")
        #expect(exited < .seconds(8), "the server took \(exited) to exit")
    }

    // MARK: Tokens and limits

    /// A token revoked by `folio serve token revoke` (another process) closes its open connections with 4401 within a
    /// few seconds; what the connection sends after is not stored, and the token is refused from then on.
    @Test func aRevokedTokensConnectionsAreClosedWith4401() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let reader = try await fixture.token(for: "notes")
        let port = fixture.server.port
        let data = fixture.server.data
        let list = try await ToolRun.folio(["serve", "token", "list", "--data", data.path])
        let id = try #require(
            list.output.split(separator: "\n").dropFirst().first.map { String($0.prefix { $0 != "\t" }) })
        let hand = HandDevice()
        let document = DocumentID(UUIDBytes(bytes: Array(repeating: 0xCD, count: 16)))
        let socket = try RawWebSocket(port: port, library: "notes", token: token)
        #expect(socket.upgraded)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        let first = hand.change(seq: 1, of: document, lamport: 1)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.changes([first], of: document)))
        try await eventually(within: .seconds(10), "the first change to be stored") {
            try await storedSeq(of: document, device: hand, port: port, token: reader) == 1
        }
        let revoked = try await ToolRun.folio(["serve", "token", "revoke", id, "--data", data.path])
        let (sent, close, closedAfter) = try await offThePool {
            let started = ContinuousClock.now
            // The device goes on writing, a change every 100 ms, until the server closes it.
            var parents = [first]
            var sent: UInt64 = 1
            var close: UInt16?
            while ContinuousClock.now - started < .seconds(10) {
                let change = hand.change(seq: sent + 1, of: document, parents: parents, lamport: sent + 1)
                guard socket.socket.send(RawWebSocket.frame(opcode: 2, hand.changes([change], of: document))) else {
                    break
                }
                sent += 1
                parents = [change]
                if let code = socket.closeCode(within: .milliseconds(100)) {
                    close = code
                    break
                }
            }
            let closedAfter = ContinuousClock.now - started
            // And once more after the close: the socket may still take bytes, the server must not take them in.
            for seq in (sent + 1)...(sent + 3) {
                let change = hand.change(seq: seq, of: document, parents: parents, lamport: seq)
                socket.socket.send(RawWebSocket.frame(opcode: 2, hand.changes([change], of: document)))
                parents = [change]
            }
            return (sent, close, closedAfter)
        }
        #expect(revoked.status == 0, "\(revoked.errors)")
        #expect(close == 4401, "close \(String(describing: close))")
        #expect(closedAfter < .seconds(4), "closed \(closedAfter) after the revocation")
        // What it sent after the close is not stored.
        try await Task.sleep(for: .milliseconds(500))
        let stored = try await storedSeq(of: document, device: hand, port: port, token: reader)
        #expect(stored <= sent, "stored \(stored), \(sent) sent before the close")
        // And the token opens nothing any more.
        let again = try RawWebSocket(port: port, library: "notes", token: token)
        #expect(again.closeCode(within: .seconds(5)) == 4401)
    }

    /// A revocation stamped by a clock far behind the server's (a machine whose clock is wrong revoked it) closes the
    /// token's open connections all the same: the server asks which of its connections' tokens are revoked, not what
    /// was revoked lately.
    @Test func aRevocationStampedByAClockBehindClosesTheConnectionsToo() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let data = fixture.server.data
        let list = try await ToolRun.folio(["serve", "token", "list", "--data", data.path])
        let id = try #require(
            list.output.split(separator: "\n").dropFirst().first.map { String($0.prefix { $0 != "\t" }) })
        let hand = HandDevice()
        let socket = try RawWebSocket(port: fixture.server.port, library: "notes", token: token)
        #expect(socket.upgraded)
        _ = socket.socket.send(RawWebSocket.frame(opcode: 2, hand.hello()))
        try AccountStore(at: data.appendingPathComponent("accounts.sqlite"))
            .revoke(id, now: Date(timeIntervalSince1970: 1_000_000))
        let close = try await offThePool { socket.closeCode(within: .seconds(10)) }
        #expect(close == 4401, "close \(String(describing: close))")
    }

    /// Upgrades past the limits per token, per library and per address are refused with 1013; a WebSocket that sends
    /// no hello is closed with 1008 at the hello timeout.
    @Test func connectionLimitsPerTokenLibraryAndAddressAndTheHelloTimeout() async throws {
        let fixture = try await ServerFixture.start(arguments: [
            "--max-connections-per-token", "2", "--max-connections-per-library", "3",
            "--max-connections-per-address", "4", "--hello-timeout", "30",
        ])
        let port = fixture.server.port
        let first = try await fixture.token(for: "notes")
        let second = try await fixture.token(for: "notes")
        let other = try await fixture.token(for: "photos")
        var open: [RawWebSocket] = []
        func connect(_ library: String, _ token: String) throws -> RawWebSocket {
            let socket = try RawWebSocket(port: port, library: library, token: token)
            _ = socket.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
            return socket
        }
        func refusal(_ library: String, _ token: String) async throws -> (UInt16?, String) {
            try await offThePool {
                let socket = try RawWebSocket(port: port, library: library, token: token)
                return (socket.closeCode(within: .seconds(5)), socket.closeReason)
            }
        }
        open.append(try connect("notes", first))
        open.append(try connect("notes", first))
        try await eventually(within: .seconds(10), "two connections") {
            try await fixture.metric("folio_connections_open") == 2
        }
        let perToken = try await refusal("notes", first)
        #expect(perToken.0 == 1013 && perToken.1.contains("token"), "\(perToken)")
        open.append(try connect("notes", second))
        try await eventually(within: .seconds(10), "three connections") {
            try await fixture.metric("folio_connections_open") == 3
        }
        let perLibrary = try await refusal("notes", second)
        #expect(perLibrary.0 == 1013 && perLibrary.1.contains("library"), "\(perLibrary)")
        open.append(try connect("photos", other))
        try await eventually(within: .seconds(10), "four connections") {
            try await fixture.metric("folio_connections_open") == 4
        }
        let perAddress = try await refusal("photos", other)
        #expect(perAddress.0 == 1013 && perAddress.1.contains("address"), "\(perAddress)")
        // A connection closed frees its slot.
        open.removeFirst().close()
        try await eventually(within: .seconds(10), "a slot of the token to be free") {
            try await fixture.metric("folio_connections_open") == 3
        }
        #expect(try connect("notes", first).closeCode(within: .milliseconds(500)) == nil)
    }

    @Test func aWebSocketWithoutAHelloIsClosed1008() async throws {
        let fixture = try await ServerFixture.start(arguments: ["--hello-timeout", "1"])
        let token = try await fixture.token(for: "notes")
        let port = fixture.server.port
        let (code, reason, elapsed) = try await offThePool {
            let started = ContinuousClock.now
            let socket = try RawWebSocket(port: port, library: "notes", token: token)
            return (socket.closeCode(within: .seconds(10)), socket.closeReason, ContinuousClock.now - started)
        }
        #expect(code == 1008, "\(String(describing: code)) \(reason)")
        #expect(reason.contains("hello"))
        #expect(elapsed < .seconds(4))
    }

    /// `Authorization: bearer …`: the scheme is case-insensitive (RFC 7235).
    @Test func theBearerSchemeIsCaseInsensitive() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let port = fixture.server.port
        let (plain, upgrade) = try await offThePool {
            let plain = try RawSocket(port: port)
            _ = plain.send(
                Array(
                    "GET /v1/libraries/notes/sync HTTP/1.1\r\nHost: x\r\nAuthorization: bEARER \(token)\r\nConnection: close\r\n\r\n"
                        .utf8))
            let upgrade = try RawWebSocket(port: port, library: "notes", token: token, scheme: "bearer")
            return (plain.readUntilClosed(within: .seconds(5)), upgrade)
        }
        #expect(plain.text.hasPrefix("HTTP/1.1 426"), "\(plain.text.prefix(60))")
        #expect(upgrade.upgraded)
        _ = upgrade.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
        #expect(upgrade.closeCode(within: .milliseconds(500)) == nil)
    }

    // MARK: Close codes

    /// A message over 16 MiB closes with 1009, whether it comes as one frame (the client reads the close frame, not a
    /// TCP reset) or as fragments.
    @Test func messagesOverTheLimitClose1009InOneFrameOrInFragments() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let port = fixture.server.port
        let (single, fragmented) = try await offThePool {
            let single = try RawWebSocket(port: port, library: "notes", token: token)
            let payload = [UInt8](repeating: 1, count: (16 << 20) + 1)
            // The whole frame is sent while the server answers; a write that fails is fine, a reset read is not.
            let writer = Thread { _ = single.socket.send(RawWebSocket.frame(opcode: 2, payload)) }
            writer.start()
            let singleCode = single.closeCode(within: .seconds(20))
            let singleEnd = single.socket.readUntilClosed(within: .seconds(10)).end
            let fragmented = try RawWebSocket(port: port, library: "notes", token: token)
            _ = fragmented.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
            let piece = [UInt8](repeating: 2, count: 6 << 20)
            _ = fragmented.socket.send(RawWebSocket.frame(opcode: 2, piece, fin: false))
            _ = fragmented.socket.send(RawWebSocket.frame(opcode: 0, piece, fin: false))
            _ = fragmented.socket.send(RawWebSocket.frame(opcode: 0, piece, fin: true))
            return ((singleCode, singleEnd), fragmented.closeCode(within: .seconds(20)))
        }
        #expect(single.0 == 1009, "one frame: \(String(describing: single.0))")
        #expect(single.1 != .reset, "one frame: the connection was reset")
        #expect(fragmented == 1009, "fragments: \(String(describing: fragmented))")
    }

    // MARK: Logs

    /// Every refused authentication leaves a warning naming the peer and the reason, never the secret, at most 10 a
    /// second with a count of those left out; connection lines name the token's public id.
    @Test func refusalsAreLoggedRateLimitedAndConnectionsNameTheirToken() async throws {
        let fixture = try await ServerFixture.start()
        let token = try await fixture.token(for: "notes")
        let port = fixture.server.port
        let secret = "folio_" + String(repeating: "7", count: 64)
        let data = fixture.server.data
        let list = try await ToolRun.folio(["serve", "token", "list", "--data", data.path])
        let id = try #require(
            list.output.split(separator: "\n").dropFirst().first.map { String($0.prefix { $0 != "\t" }) })
        try await offThePool {
            for _ in 0..<40 {
                let socket = try RawSocket(port: port)
                _ = socket.send(
                    Array(
                        "GET /v1/libraries/notes/sync HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(secret)\r\nConnection: close\r\n\r\n"
                            .utf8))
                _ = socket.readUntilClosed(within: .seconds(5))
            }
            Thread.sleep(forTimeInterval: 1.1)
            // One more after the second: it carries the count of those left out.
            let socket = try RawSocket(port: port)
            _ = socket.send(Array("GET /v1/libraries/notes/sync HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            _ = socket.readUntilClosed(within: .seconds(5))
            let valid = try RawWebSocket(port: port, library: "notes", token: token)
            _ = valid.socket.send(RawWebSocket.frame(opcode: 2, HandDevice().hello()))
            Thread.sleep(forTimeInterval: 0.5)
            valid.close()
            Thread.sleep(forTimeInterval: 0.5)
        }
        let server = fixture.server
        let run = try await offThePool {
            server.send(SIGTERM)
            return server.wait()
        }
        let lines = run.errors.split(separator: "\n")
        let refusals = lines.filter { $0.contains("connection refused") }
        // 41 refusals: at least the first second's 10 are written, and not all of them (however slow the machine).
        #expect(refusals.count >= 10 && refusals.count < 41, "\(refusals.count) refusal lines")
        #expect(refusals.allSatisfy { $0.contains("peer=") && $0.contains("reason=") })
        #expect(refusals.contains { $0.contains("suppressed=") })
        #expect(!run.errors.contains(secret), "a secret was logged")
        #expect(!run.errors.contains(token), "a secret was logged")
        let connection = lines.filter { $0.contains("connection opened") || $0.contains("connection closed") }
        #expect(connection.count >= 2 && connection.allSatisfy { $0.contains("token=\(id)") }, "\(connection)")
    }
}

/// The seq of `device`'s last change of `document` the server stores, as a device syncing with `token` sees it.
func storedSeq(of document: DocumentID, device: HandDevice, port: Int, token: String) async throws -> UInt64 {
    let endpoint = try ServerEndpoint(
        url: URL(string: "ws://127.0.0.1:\(port)/v1/libraries/notes")!, token: token)
    let store = try ChangeLogStore(inMemoryNamed: "probe-\(UUID())", key: DeviceKey(), deviceName: "probe")
    _ = try await WebSocketTransport(endpoint: endpoint).sync(store)
    return try store.vector(of: document)[device.key.id]
}

#if canImport(Glibc)
    private let systemSend = Glibc.send
    private let systemClose = Glibc.close
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let noSignal = Int32(MSG_NOSIGNAL)
#else
    private let systemSend = Darwin.send
    private let systemClose = Darwin.close
    private let streamSocket = SOCK_STREAM
    private let noSignal: Int32 = 0
#endif

/// A TCP connection to the server on loopback with blocking I/O: it sends any bytes, and reads with a timeout.
final class RawSocket: @unchecked Sendable {
    /// How a read ended.
    enum End: Error, Equatable {
        case closed, reset, timedOut
    }

    /// What a read gathered.
    struct Answer: CustomStringConvertible {
        var bytes: [UInt8]
        var end: End
        var elapsed: Duration
        var text: String { String(decoding: bytes, as: UTF8.self) }
        var description: String { "\(bytes.count) bytes, \(end) after \(elapsed): \(text.prefix(60))" }
    }

    private let descriptor: Int32
    private var closed = false

    /// Connects to `port` on loopback; with `receiveBuffer`, the kernel's receive buffer is that small (set before
    /// connecting, so that it does not grow: a client that stops reading then holds little).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { throw RawSocketError(message: "socket: \(errno)") }
        if var size = receiveBuffer {
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            _ = systemClose(descriptor)
            throw RawSocketError(message: "connect: \(errno)")
        }
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        _ = systemClose(descriptor)
    }

    /// Sends all of `bytes`, waiting for the server to take them until `deadline` (needs a send timeout,
    /// ``setSendTimeout(_:)``, to look at the clock while it waits); false once the connection refuses them or the
    /// deadline passed (part of `bytes` may have gone).
    func send(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                systemSend(descriptor, $0.baseAddress! + sent, bytes.count - sent, noSignal)
            }
            if count < 0, errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK {
                guard ContinuousClock.now < deadline else { return false }
                continue
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Makes a send that cannot go on for `timeout` (the server reads nothing) give up, and return false.
    func setSendTimeout(_ timeout: Duration) {
        var value = timeval(
            tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Closes with a reset (SO_LINGER 0): what the server has not read yet is thrown away with the connection.
    func reset() {
        guard !closed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Sends all of `bytes`; false once the connection refuses them.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                systemSend(descriptor, $0.baseAddress! + sent, bytes.count - sent, noSignal)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Reads what is there within `timeout`: bytes, nothing yet (`[]`), or nil at the end of the stream.
    func read(within timeout: Duration) -> Result<[UInt8], End> {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let ready = poll(&poller, 1, max(milliseconds, 0))
        guard ready > 0 else { return .success([]) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 { return .success(Array(buffer[0..<count])) }
        return .failure(count == 0 ? .closed : .reset)
    }

    /// Whether the peer has closed the connection (or reset it) within `timeout`, throwing away what it sent.
    func isClosedByPeer(within timeout: Duration) -> Bool {
        if case .failure = read(within: timeout) { return true }
        return false
    }

    /// Reads until the server closes the connection, or `timeout` passes.
    func readUntilClosed(within timeout: Duration) -> Answer {
        let started = ContinuousClock.now
        var bytes: [UInt8] = []
        while true {
            let left = timeout - (ContinuousClock.now - started)
            guard left > .zero else { return Answer(bytes: bytes, end: .timedOut, elapsed: timeout) }
            switch read(within: min(left, Duration.milliseconds(100))) {
            case .success(let more): bytes += more
            case .failure(let end): return Answer(bytes: bytes, end: end, elapsed: ContinuousClock.now - started)
            }
        }
    }
}

struct RawSocketError: Error {
    var message: String
}

/// A WebSocket client by hand over a ``RawSocket``: the upgrade, masked frames of any shape, and the server's frames.
final class RawWebSocket: @unchecked Sendable {
    let socket: RawSocket
    /// Whether the server answered the upgrade with 101.
    let upgraded: Bool
    /// The head of the server's answer to the upgrade (status line and headers).
    let answer: String
    /// The reason of the server's close frame, once read.
    private(set) var closeReason = ""
    private var buffer: [UInt8] = []
    /// Whether the connection ended (closed or reset).
    private(set) var ended = false

    /// Upgrades a connection to `library` with `token`; `headers` are further lines of the request (`Name: value`).
    init(
        port: Int, library: String, token: String, scheme: String = "Bearer", receiveBuffer: Int32? = nil,
        headers: [String] = []
    ) throws {
        socket = try RawSocket(port: port, receiveBuffer: receiveBuffer)
        let request =
            "GET /v1/libraries/\(library)/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "Authorization: \(scheme) \(token)\r\n\r\n"
        socket.send(Array(request.utf8))
        let deadline = ContinuousClock.now + .seconds(10)
        var head: [UInt8] = []
        while ContinuousClock.now < deadline {
            guard case .success(let bytes) = socket.read(within: .milliseconds(100)) else { break }
            head += bytes
            if let end = Self.find([13, 10, 13, 10], in: head) {
                buffer = Array(head[(end + 4)...])
                head = Array(head[..<end])
                break
            }
        }
        answer = String(decoding: head, as: UTF8.self)
        upgraded = answer.hasPrefix("HTTP/1.1 101")
    }

    func close() { socket.close() }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<(start + needle.count)]) == needle
        {
            return start
        }
        return nil
    }

    /// A client frame: masked with a zero key (the payload goes as it is).
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (UInt64($0) * 8)) & 0xFF) }
        }
        frame += [0, 0, 0, 0]
        return frame + payload
    }

    /// The server's next frame within `timeout`, or nil (none yet, or the connection ended).
    func nextFrame(within timeout: Duration) -> (opcode: UInt8, payload: [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let frame = parseFrame() { return frame }
            let left = deadline - ContinuousClock.now
            guard left > .zero, !ended else { return nil }
            switch socket.read(within: min(left, Duration.milliseconds(100))) {
            case .success(let bytes): buffer += bytes
            case .failure:
                ended = true
                return parseFrame()
            }
        }
    }

    private func parseFrame() -> (opcode: UInt8, payload: [UInt8])? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard buffer.count >= offset + length else { return nil }
        let frame = (buffer[0] & 0x0F, Array(buffer[offset..<(offset + length)]))
        buffer.removeFirst(offset + length)
        return frame
    }

    /// The code of the server's close frame, reading (and skipping other frames) for at most `timeout`; nil if none
    /// came.
    func closeCode(within timeout: Duration) -> UInt16? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !ended || !buffer.isEmpty {
            guard let frame = nextFrame(within: deadline - ContinuousClock.now) else { continue }
            if frame.opcode == 8, frame.payload.count >= 2 {
                closeReason = String(decoding: frame.payload.dropFirst(2), as: UTF8.self)
                return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
            }
        }
        return nil
    }
}
