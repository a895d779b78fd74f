import Crypto
import FolioCore
import Foundation
import GRDB

/// The server's accounts, libraries, bearer tokens and device bindings, in one SQLite file (`accounts.sqlite` in the
/// data directory).
///
/// A library belongs to one account. A token grants one library; only its SHA-256 hash is stored, so the file does
/// not hold a usable token. A device is bound to the library it was first seen in, and cannot write into another.
public final class AccountStore: Sendable {
    /// A token as listed: never its secret.
    public struct Token: Hashable, Sendable {
        /// The token's public id (`tok_` and 12 hex digits), which `revoke` takes.
        public var id: String
        /// The library it grants.
        public var library: String
        /// The account the library belongs to.
        public var account: String
        /// When it was issued.
        public var created: Date
        /// When it was revoked; `nil` while it is valid.
        public var revoked: Date?
    }

    /// A token just issued: its id and its secret, shown once.
    public struct IssuedToken: Hashable, Sendable {
        /// The token's description.
        public var token: Token
        /// The bearer secret a client sends (`Authorization: Bearer <secret>`).
        public var secret: String
    }

    /// The longest library or account name accepted.
    public static let maximumNameLength = 64

    private let database: DatabaseQueue

    /// Opens (or creates) the account database at `url`.
    ///
    /// - Throws: ``ServerError`` `storage` when the file cannot be opened or is not an account database.
    public init(at url: URL) throws {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            database = try DatabaseQueue(path: url.path, configuration: configuration)
            var migrator = DatabaseMigrator()
            migrator.registerMigration("accounts-1") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE library (name TEXT PRIMARY KEY NOT NULL, account TEXT NOT NULL);
                        CREATE TABLE token (
                            id TEXT PRIMARY KEY NOT NULL, hash BLOB NOT NULL UNIQUE,
                            library TEXT NOT NULL REFERENCES library(name),
                            created REAL NOT NULL, revoked REAL);
                        CREATE TABLE device (id BLOB PRIMARY KEY NOT NULL, library TEXT NOT NULL);
                        """)
            }
            // The server looks for revocations every second (``revokedTokens(since:)``).
            migrator.registerMigration("accounts-2-revoked-index") { db in
                try db.execute(sql: "CREATE INDEX token_revoked ON token(revoked) WHERE revoked IS NOT NULL")
            }
            try migrator.migrate(database)
        } catch {
            throw ServerError(.storage, "cannot open the account database \(url.path)", cause: error)
        }
    }

    /// Whether `name` is acceptable as a library or account name: 1 to 64 ASCII letters, digits, `-`, `_` or `.`,
    /// not starting with `.`.
    public static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maximumNameLength, !name.hasPrefix(".") else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }

    /// Issues a token for `library`, creating the library in `account` if it is new.
    ///
    /// - Parameters:
    ///   - library: the library's name (see ``isValidName(_:)``).
    ///   - account: the account it belongs to.
    ///   - now: the issue time.
    ///   - random: the source of the secret and the id; the system's secure generator by default.
    /// - Throws: ``ServerError`` `invalidName`, `conflict` when the library belongs to another account, `storage`.
    public func createToken(
        library: String, account: String, now: Date = Date(),
        random: inout some RandomNumberGenerator
    ) throws -> IssuedToken {
        for (what, name) in [("library", library), ("account", account)] where !Self.isValidName(name) {
            throw ServerError(
                .invalidName,
                "\(what) name \(name.debugDescription) is not valid: use 1 to \(Self.maximumNameLength) letters, digits, '-', '_' or '.', not starting with '.'"
            )
        }
        let secret = "folio_" + Self.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        let id = "tok_" + Self.hex((0..<6).map { _ in UInt8.random(in: 0...255, using: &random) })
        let hash = Self.hash(secret)
        try write("issuing a token for library \(library)") { db in
            if let owner = try String.fetchOne(
                db, sql: "SELECT account FROM library WHERE name = ?", arguments: [library])
            {
                guard owner == account else {
                    throw ServerError(
                        .conflict, "library \(library) belongs to account \(owner), not \(account)")
                }
            } else {
                try db.execute(sql: "INSERT INTO library (name, account) VALUES (?, ?)", arguments: [library, account])
            }
            try db.execute(
                sql: "INSERT INTO token (id, hash, library, created) VALUES (?, ?, ?, ?)",
                arguments: [id, Data(hash), library, now.timeIntervalSince1970])
        }
        return IssuedToken(
            token: Token(id: id, library: library, account: account, created: now, revoked: nil), secret: secret)
    }

    /// Issues a token with the system's secure random generator.
    ///
    /// - Throws: ``ServerError``, as ``createToken(library:account:now:random:)``.
    public func createToken(library: String, account: String = "default", now: Date = Date()) throws -> IssuedToken {
        var random = SystemRandomNumberGenerator()
        return try createToken(library: library, account: account, now: now, random: &random)
    }

    /// Every token, valid or revoked, in the order issued.
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func tokens() throws -> [Token] {
        try read("listing tokens") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT token.id, token.library, library.account, token.created, token.revoked
                    FROM token JOIN library ON library.name = token.library ORDER BY token.created, token.id
                    """
            ).map(Self.token)
        }
    }

    /// Revokes the token `id`: new connections presenting it are refused; a running server closes those already open
    /// within a few seconds (4401).
    ///
    /// - Throws: ``ServerError`` `notFound` when no token has that id, `storage`.
    public func revoke(_ id: String, now: Date = Date()) throws {
        try write("revoking token \(id)") { db in
            try db.execute(
                sql: "UPDATE token SET revoked = coalesce(revoked, ?) WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id])
            guard db.changesCount == 1 else { throw ServerError(.notFound, "there is no token \(id)") }
        }
    }

    /// The ids of the tokens revoked at `date` or later (by the clock of the process that revoked them).
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func revokedTokens(since date: Date) throws -> [String] {
        try read("listing revoked tokens") { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM token WHERE revoked IS NOT NULL AND revoked >= ?",
                arguments: [date.timeIntervalSince1970])
        }
    }

    /// The valid token whose secret is `secret`, or `nil`.
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func authenticate(_ secret: String) throws -> Token? {
        guard secret.utf8.count <= 256 else { return nil }
        let hash = Data(Self.hash(secret))
        return try read("checking a token") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT token.id, token.library, library.account, token.created, token.revoked
                    FROM token JOIN library ON library.name = token.library
                    WHERE token.hash = ? AND token.revoked IS NULL
                    """, arguments: [hash]
            ).map(Self.token)
        }
    }

    /// Binds each device of `devices` not seen before to `library`, and returns those already bound to another
    /// library (in the order given): they cannot write into `library`.
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func bind(_ devices: [DeviceID], to library: String) throws -> [DeviceID] {
        guard !devices.isEmpty else { return [] }
        return try write("binding devices to library \(library)") { db in
            var foreign: [DeviceID] = []
            for device in devices {
                let id = Data(device.uuid.bytes)
                try db.execute(
                    sql: "INSERT OR IGNORE INTO device (id, library) VALUES (?, ?)", arguments: [id, library])
                let bound = try String.fetchOne(db, sql: "SELECT library FROM device WHERE id = ?", arguments: [id])
                if bound != library { foreign.append(device) }
            }
            return foreign
        }
    }

    /// The devices of `devices` bound to a library other than `library`, in the order given: they cannot write into
    /// `library`. Binds nothing (see ``bind(_:to:)``, called once a device proved its key).
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func boundElsewhere(_ devices: [DeviceID], than library: String) throws -> [DeviceID] {
        guard !devices.isEmpty else { return [] }
        return try read("looking up the libraries of devices") { db in
            try devices.filter { device in
                let bound = try String.fetchOne(
                    db, sql: "SELECT library FROM device WHERE id = ?", arguments: [Data(device.uuid.bytes)])
                return bound != nil && bound != library
            }
        }
    }

    private static func token(_ row: Row) -> Token {
        let revoked: Double? = row[4]
        return Token(
            id: row[0], library: row[1], account: row[2], created: Date(timeIntervalSince1970: row[3]),
            revoked: revoked.map { Date(timeIntervalSince1970: $0) })
    }

    static func hash(_ secret: String) -> [UInt8] { Array(SHA256.hash(data: Data(secret.utf8))) }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func read<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch let error as ServerError { throw error } catch {
            throw ServerError(.storage, "the account database failed while \(action)", cause: error)
        }
    }

    private func write<T>(_ action: String, _ body: (Database) throws -> T) throws -> T {
        do { return try database.write(body) } catch let error as ServerError { throw error } catch {
            throw ServerError(.storage, "the account database failed while \(action)", cause: error)
        }
    }
}
