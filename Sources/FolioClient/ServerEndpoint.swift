import FolioSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A library on a Folio server, and the bearer token that grants it.
///
/// The address is the library's: `ws://HOST:PORT/v1/libraries/NAME` (or `wss://`, `http://`, `https://`, which
/// mean the same); `folio serve token create` prints it with the token.
///
/// The token travels in a header of every connection, so it is only sent where no one on the way can read it: over
/// `wss://` (`https://`) to any host, or over `ws://` (`http://`) to this machine (`localhost`, 127.0.0.0/8, `::1`).
/// A cleartext address of another host is refused unless the app opts in with `allowsCleartext` (a trusted network,
/// a test rig); a server beyond one machine is meant to be reached through a TLS-terminating proxy.
public struct ServerEndpoint: Hashable, Sendable {
    /// The library's address.
    public let url: URL
    /// The bearer token.
    public let token: String
    /// The WebSocket address of the library's sync route.
    let syncAddress: String

    /// The longest token an endpoint carries, in bytes: the longest a server checks (an app's signed token, a JSON
    /// Web Token, may be that long; the server's own tokens are far shorter).
    public static let maximumTokenBytes = 8_192

    /// Checks `url` and `token`.
    ///
    /// - Parameters:
    ///   - url: the library's address.
    ///   - token: the bearer token that grants the library.
    ///   - allowsCleartext: whether the token may be sent unencrypted (`ws://`, `http://`) to a host other than this
    ///     machine. Off by default: anyone on the network path could read the token and use the library.
    /// - Throws: `SyncError` `malformed` when the address is not a library's on a server (scheme, host, path), when
    ///   it is a cleartext address of another machine and `allowsCleartext` is false, or when the token is empty,
    ///   longer than ``maximumTokenBytes`` or holds characters a header cannot carry.
    public init(url: URL, token: String, allowsCleartext: Bool = false) throws {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else {
            throw SyncError(.malformed, "\(url) is not a server address: it needs a scheme and a host")
        }
        let secure: Bool
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw SyncError(.malformed, "\(url): the scheme must be ws, wss, http or https")
        }
        var parts = components.path.split(separator: "/").map(String.init)
        if parts.last == "sync" { parts.removeLast() }
        guard parts.count == 3, parts[0] == "v1", parts[1] == "libraries", !parts[2].isEmpty else {
            throw SyncError(.malformed, "\(url): the path must be /v1/libraries/NAME")
        }
        guard !token.isEmpty, token.utf8.count <= Self.maximumTokenBytes,
            token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw SyncError(
                .malformed,
                "the token is empty, longer than \(Self.maximumTokenBytes) bytes or holds characters a header cannot carry"
            )
        }
        guard secure || allowsCleartext || Self.isLoopback(host) else {
            throw SyncError(
                .malformed,
                "\(url): the token would cross the network in cleartext to \(host); use wss:// (a TLS-terminating "
                    + "proxy in front of the server), or opt in with allowsCleartext")
        }
        self.url = url
        self.token = token
        let port = components.port.map { ":\($0)" } ?? ""
        // Foundation gives an IPv6 host with its brackets on some platforms, without them on others.
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        syncAddress = "\(secure ? "wss" : "ws")://\(hostPart)\(port)/v1/libraries/\(parts[2])/sync"
    }

    /// Whether `host` names this machine: `localhost`, an IPv4 address in 127.0.0.0/8, `::1`, or an IPv4-mapped
    /// IPv6 address of 127.0.0.0/8. Other names are not resolved: a name's address is the network's to say.
    package static func isLoopback(_ host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "localhost." { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, host, &ipv4) == 1 {
            return withUnsafeBytes(of: &ipv4) { $0[0] } == 127
        }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, host, &ipv6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &ipv6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }
}
