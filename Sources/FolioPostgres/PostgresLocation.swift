import FolioServer
import Foundation
import PostgresNIO

/// Where a PostgreSQL database is and how to reach it, read from a connection URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]` (`postgresql://` too). The
/// port is 5432 unless given; `sslmode` is `prefer` unless given (`disable` for a database on loopback).
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
        /// When the server offers it.
        case prefer
        /// Always: the connection fails without it.
        case require
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
        guard let host = components.host, !host.isEmpty else { throw refuse("it names no host") }
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
                    throw refuse("sslmode must be disable, prefer or require")
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

    /// The client configuration, with at most `connections` connections.
    func clientConfiguration(connections: Int) -> PostgresClient.Configuration {
        let mode: PostgresClient.Configuration.TLS
        switch tls {
        case .disable: mode = .disable
        case .prefer: mode = .prefer(.makeClientConfiguration())
        case .require: mode = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: mode)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.connectionIdleTimeout = .seconds(60)
        return configuration
    }
}
