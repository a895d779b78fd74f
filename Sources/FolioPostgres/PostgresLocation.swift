import FolioServer
import Foundation
import PostgresNIO

/// Where a PostgreSQL database is and how to reach it, read from a connection URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full]` (`postgresql://`
/// too; an IPv6 address in brackets). The port is 5432 and `sslmode` is `prefer` unless given.
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The port.
    public var port: Int
    /// The role to connect as.
    public var username: String
    /// The role's password, if it has one.
    public var password: String?
    /// The database.
    public var database: String
    /// Whether the connection is encrypted.
    public var tls: TLSMode

    /// The encryption of the connection, as libpq's `sslmode` names it.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never: for a database on loopback or a private network.
        case disable
        /// When the server offers it, without checking its certificate (as libpq's `prefer`).
        case prefer
        /// Always, without checking the server's certificate (as libpq's `require`): the connection fails without it.
        case require
        /// Always, the server's certificate checked against the system's trusted authorities and its name against
        /// the host (as libpq's `verify-full`).
        case verifyFull = "verify-full"
    }

    /// The longest URL accepted, in bytes.
    public static let maximumURLLength = 2_048

    /// Reads a connection URL.
    ///
    /// - Throws: `ServerError` `invalidName` for a URL that is not of the form above (the message says what is
    ///   wrong, never the password).
    public init(url: String) throws {
        func refuse(_ why: String) -> ServerError {
            ServerError(.invalidName, "the PostgreSQL URL is not valid: \(why)")
        }
        guard url.utf8.count <= Self.maximumURLLength else {
            throw refuse("it is longer than \(Self.maximumURLLength) bytes")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme else {
            throw refuse("expected postgres://USER@HOST[:PORT]/DATABASE")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw refuse("its scheme is \(scheme.debugDescription), not postgres")
        }
        guard components.fragment == nil else { throw refuse("it has a fragment (#…)") }
        guard var host = components.host, !host.isEmpty else { throw refuse("it names no host") }
        // An IPv6 address comes in brackets.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw refuse("it names no host") }
        guard let user = components.user, !user.isEmpty else { throw refuse("it names no user") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !database.isEmpty, !database.contains("/") else { throw refuse("it names no database") }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw refuse("its port \(port) is not within 1...65535") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw refuse("sslmode must be disable, prefer, require or verify-full")
                }
                tls = mode
            default:
                throw refuse("the parameter \(item.name.debugDescription) is not supported (only sslmode)")
            }
        }
        self.host = host
        self.port = port
        self.username = user
        self.password = components.password
        self.database = database
        self.tls = tls
    }

    /// The same server and role, another database: what tests and tools use to make and drop databases.
    public func database(_ name: String) -> PostgresLocation {
        var location = self
        location.database = name
        return location
    }

    /// The URL without its password.
    public var description: String {
        "postgres://\(username)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    /// The client configuration, with at most `connections` connections; the database ends a statement, a wait for
    /// a lock, or a transaction left idle, that takes longer than `timeout`.
    package func clientConfiguration(connections: Int, timeout: Duration) -> PostgresClient.Configuration {
        let mode: PostgresClient.Configuration.TLS
        switch tls {
        case .disable: mode = .disable
        case .prefer, .require:
            // Encrypted, the certificate not checked: libpq's meaning of these modes.
            var unchecked = TLSConfiguration.makeClientConfiguration()
            unchecked.certificateVerification = .none
            mode = tls == .prefer ? .prefer(unchecked) : .require(unchecked)
        case .verifyFull: mode = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: mode)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.connectionIdleTimeout = .seconds(60)
        let milliseconds = String(max(1, timeout.components.seconds * 1000))
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", milliseconds), ("lock_timeout", milliseconds),
            ("idle_in_transaction_session_timeout", milliseconds),
        ]
        return configuration
    }
}
