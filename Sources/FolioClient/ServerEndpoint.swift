import FolioSync
import Foundation

/// A library on a Folio server, and the bearer token that grants it.
///
/// The address is the library's: `ws://HOST:PORT/v1/libraries/NAME` (or `wss://`, `http://`, `https://`, which
/// mean the same); `folio serve token create` prints it with the token.
public struct ServerEndpoint: Hashable, Sendable {
    /// The library's address.
    public let url: URL
    /// The bearer token.
    public let token: String
    /// The WebSocket address of the library's sync route.
    let syncAddress: String

    /// Checks `url` and `token`.
    ///
    /// - Throws: `SyncError` `malformed` when the address is not a library's on a server (scheme, host, path) or
    ///   the token is empty or holds characters a header cannot carry.
    public init(url: URL, token: String) throws {
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
        guard !token.isEmpty, token.utf8.count <= 256, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SyncError(.malformed, "the token is empty, too long or holds characters a header cannot carry")
        }
        self.url = url
        self.token = token
        let port = components.port.map { ":\($0)" } ?? ""
        let hostPart = host.contains(":") ? "[\(host)]" : host
        syncAddress = "\(secure ? "wss" : "ws")://\(hostPart)\(port)/v1/libraries/\(parts[2])/sync"
    }
}
