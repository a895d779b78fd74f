import Crypto
import FolioCore
import Foundation
import GRDB

/// The server's accounts, libraries, bearer tokens and device bindings (``ServerAccounts``) in one SQLite file
/// (`accounts.sqlite` in the data directory).
public final class AccountStore: ServerAccounts {
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
            // Revoked tokens, listed by time (a running server now asks about its connections' tokens instead).
            migrator.registerMigration("accounts-2-revoked-index") { db in
                try db.execute(sql: "CREATE INDEX token_revoked ON token(revoked) WHERE revoked IS NOT NULL")
            }
            // Users of the app whose tokens (signed by the app's backend) are refused.
            migrator.registerMigration("accounts-3-revoked-users") { db in
                try db.execute(
                    sql: "CREATE TABLE revoked_user (subject TEXT PRIMARY KEY NOT NULL, revoked REAL NOT NULL)")
            }
            // What each token grants in its library (LibraryRole); the tokens issued before roles write.
            migrator.registerMigration("accounts-4-token-roles") { db in
                try db.execute(sql: "ALTER TABLE token ADD COLUMN role TEXT NOT NULL DEFAULT 'write'")
            }
            // Libraries shared with the app's users, and libraries taken offline.
            migrator.registerMigration("accounts-5-shares") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE share (
                            library TEXT NOT NULL, subject TEXT NOT NULL, role TEXT NOT NULL, created REAL NOT NULL,
                            PRIMARY KEY (library, subject));
                        CREATE INDEX share_subject ON share(subject);
                        CREATE TABLE offline_library (name TEXT PRIMARY KEY NOT NULL, since REAL NOT NULL);
                        """)
            }
            // Shares of single documents: the document ('' for the whole library) joins the share's key.
            migrator.registerMigration("accounts-6-document-shares") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE share_by_document (
                            library TEXT NOT NULL, subject TEXT NOT NULL, document TEXT NOT NULL DEFAULT '',
                            role TEXT NOT NULL, created REAL NOT NULL,
                            PRIMARY KEY (library, subject, document));
                        INSERT INTO share_by_document (library, subject, role, created)
                            SELECT library, subject, role, created FROM share;
                        DROP TABLE share;
                        ALTER TABLE share_by_document RENAME TO share;
                        CREATE INDEX share_subject ON share(subject);
                        """)
            }
            try migrator.migrate(database)
            // A database a newer Folio migrated may hold what this build would ignore (a revocation, a role): refused.
            if try database.read({ try migrator.hasBeenSuperseded($0) }) {
                throw ServerError(
                    .storage, "the account database \(url.path) was written by a newer Folio; this build cannot use it")
            }
        } catch {
            throw ServerError(.storage, "cannot open the account database \(url.path)", cause: error)
        }
    }

    /// See ``ServerAccounts/createToken(library:account:role:now:random:)``.
    public func createToken(
        library: String, account: String, role: LibraryRole, now: Date, random: inout some RandomNumberGenerator
    ) throws -> IssuedToken {
        try AccountNames.check(library: library, account: account)
        let drawn = TokenSecret(random: &random)
        let (secret, id, hash) = (drawn.secret, drawn.id, drawn.hash)
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
                sql: "INSERT INTO token (id, hash, library, created, role) VALUES (?, ?, ?, ?, ?)",
                arguments: [id, Data(hash), library, now.timeIntervalSince1970, role.rawValue])
        }
        return IssuedToken(
            token: ServerToken(id: id, library: library, account: account, created: now, revoked: nil, role: role),
            secret: secret)
    }

    /// See ``ServerAccounts/tokens()``.
    public func tokens() throws -> [ServerToken] {
        try read("listing tokens") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT token.id, token.library, library.account, token.created, token.revoked, token.role
                    FROM token JOIN library ON library.name = token.library ORDER BY token.created, token.id
                    """
            ).map(Self.token)
        }
    }

    /// See ``ServerAccounts/revoke(_:now:)``.
    public func revoke(_ id: String, now: Date) throws {
        try write("revoking token \(id)") { db in
            try db.execute(
                sql: "UPDATE token SET revoked = coalesce(revoked, ?) WHERE id = ?",
                arguments: [now.timeIntervalSince1970, id])
            guard db.changesCount == 1 else { throw ServerError(.notFound, "there is no token \(id)") }
        }
    }

    /// See ``ServerAccounts/revokeUser(_:now:)``.
    public func revokeUser(_ subject: String, now: Date) throws {
        try Self.checkSubject(subject)
        try write("revoking user \(subject.debugDescription)") { db in
            try db.execute(
                sql: "INSERT INTO revoked_user (subject, revoked) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [subject, now.timeIntervalSince1970])
        }
    }

    /// See ``ServerAccounts/restoreUser(_:)``.
    public func restoreUser(_ subject: String) throws {
        let removed = try write("restoring user \(subject.debugDescription)") { db -> Bool in
            try db.execute(sql: "DELETE FROM revoked_user WHERE subject = ?", arguments: [subject])
            return db.changesCount > 0
        }
        guard removed else { throw ServerError(.notFound, "user \(subject.debugDescription) is not revoked") }
    }

    /// See ``ServerAccounts/revokedUsers()``.
    public func revokedUsers() throws -> [RevokedUser] {
        try read("listing revoked users") { db in
            try Row.fetchAll(db, sql: "SELECT subject, revoked FROM revoked_user ORDER BY revoked, subject").map {
                RevokedUser(subject: $0[0], revoked: Date(timeIntervalSince1970: $0[1]))
            }
        }
    }

    /// See ``ServerAccounts/revokedUsers(among:)``.
    public func revokedUsers(among subjects: [String]) throws -> [String] {
        guard !subjects.isEmpty else { return [] }
        return try read("looking for revoked users") { db in
            var revoked: [String] = []
            // In pieces, within SQLite's bound on a statement's arguments.
            for start in stride(from: 0, to: subjects.count, by: 500) {
                let piece = Array(subjects[start..<min(start + 500, subjects.count)])
                let marks = Array(repeating: "?", count: piece.count).joined(separator: ",")
                revoked += try String.fetchAll(
                    db, sql: "SELECT subject FROM revoked_user WHERE subject IN (\(marks))",
                    arguments: StatementArguments(piece))
            }
            return Array(Set(revoked)).sorted()
        }
    }

    /// See ``ServerAccounts/share(_:document:with:role:now:)``.
    public func share(_ library: String, document: DocumentID?, with subject: String, role: LibraryRole, now: Date)
        throws
    {
        try Self.checkShare(library, subject)
        let stored = document?.description ?? ""
        try write("sharing library \(library)") { db in
            try db.execute(
                sql: """
                    INSERT INTO share (library, subject, document, role, created) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (library, subject, document) DO UPDATE SET role = excluded.role
                    """, arguments: [library, subject, stored, role.rawValue, now.timeIntervalSince1970])
        }
    }

    /// See ``ServerAccounts/unshare(_:document:from:)``.
    public func unshare(_ library: String, document: DocumentID?, from subject: String) throws {
        let stored = document?.description ?? ""
        let removed = try write("ending a share of library \(library)") { db -> Bool in
            try db.execute(
                sql: "DELETE FROM share WHERE library = ? AND subject = ? AND document = ?",
                arguments: [library, subject, stored])
            return db.changesCount > 0
        }
        guard removed else { throw Self.notShared(library, document, subject) }
    }

    /// See ``ServerAccounts/shares(of:)``.
    public func shares(of library: String) throws -> [LibraryShare] {
        try read("listing the shares of library \(library)") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT library, subject, role, created, document FROM share WHERE library = ?
                    ORDER BY created, subject, document
                    """,
                arguments: [library]
            ).compactMap(Self.share)
        }
    }

    /// See ``ServerAccounts/shares(among:in:)``.
    public func shares(among subjects: [String], in libraries: [String]) throws -> [LibraryShare] {
        let subjects = Array(Set(subjects)).sorted()
        let libraries = Array(Set(libraries)).sorted()
        guard !subjects.isEmpty, !libraries.isEmpty else { return [] }
        let found = try read("looking for shares") { db in
            var found: [LibraryShare] = []
            // In pieces, within SQLite's bound on a statement's arguments.
            for start in stride(from: 0, to: subjects.count, by: 400) {
                let subjectPiece = Array(subjects[start..<min(start + 400, subjects.count)])
                for libraryStart in stride(from: 0, to: libraries.count, by: 400) {
                    let libraryPiece = Array(libraries[libraryStart..<min(libraryStart + 400, libraries.count)])
                    let subjectMarks = Array(repeating: "?", count: subjectPiece.count).joined(separator: ",")
                    let libraryMarks = Array(repeating: "?", count: libraryPiece.count).joined(separator: ",")
                    found += try Row.fetchAll(
                        db,
                        sql: """
                            SELECT library, subject, role, created, document FROM share
                            WHERE subject IN (\(subjectMarks)) AND library IN (\(libraryMarks))
                            """,
                        arguments: StatementArguments(subjectPiece + libraryPiece)
                    ).compactMap(Self.share)
                }
            }
            return found
        }
        return found.sorted {
            ($0.library, $0.subject, $0.storedDocument) < ($1.library, $1.subject, $1.storedDocument)
        }
    }

    /// See ``ServerAccounts/offlineSince(_:)``.
    public func offlineSince(_ library: String) throws -> Date? {
        try read("looking whether library \(library) is offline") { db in
            try Double.fetchOne(db, sql: "SELECT since FROM offline_library WHERE name = ?", arguments: [library])
                .map { Date(timeIntervalSince1970: $0) }
        }
    }

    /// See ``ServerAccounts/tokens(of:)``.
    public func tokens(of library: String) throws -> [ServerToken] {
        try read("listing the tokens of library \(library)") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT token.id, token.library, library.account, token.created, token.revoked, token.role
                    FROM token JOIN library ON library.name = token.library WHERE token.library = ?
                    ORDER BY token.created, token.id
                    """, arguments: [library]
            ).map(Self.token)
        }
    }

    /// See ``ServerAccounts/takeOffline(_:now:)``.
    public func takeOffline(_ library: String, now: Date) throws {
        try AccountNames.check(library: library)
        try write("taking library \(library) offline") { db in
            try db.execute(
                sql: "INSERT INTO offline_library (name, since) VALUES (?, ?) ON CONFLICT DO NOTHING",
                arguments: [library, now.timeIntervalSince1970])
        }
    }

    /// See ``ServerAccounts/bringOnline(_:)``.
    public func bringOnline(_ library: String) throws {
        let removed = try write("bringing library \(library) online") { db -> Bool in
            try db.execute(sql: "DELETE FROM offline_library WHERE name = ?", arguments: [library])
            return db.changesCount > 0
        }
        guard removed else { throw ServerError(.notFound, "library \(library) is not offline") }
    }

    /// See ``ServerAccounts/offlineLibraries()``.
    public func offlineLibraries() throws -> [OfflineLibrary] {
        try read("listing offline libraries") { db in
            try Row.fetchAll(db, sql: "SELECT name, since FROM offline_library ORDER BY name").map {
                OfflineLibrary(library: $0[0], since: Date(timeIntervalSince1970: $0[1]))
            }
        }
    }

    /// A share's row; `nil` for one whose document is not an identity (damaged), which shares nothing.
    private static func share(_ row: Row) -> LibraryShare? {
        let role: String? = row[2]
        let document = LibraryShare.document(stored: row[4] as String? ?? "")
        guard document.readable else { return nil }
        return LibraryShare(
            library: row[0], document: document.document, subject: row[1], role: LibraryRole(stored: role),
            created: Date(timeIntervalSince1970: row[3]))
    }

    /// See ``ServerAccounts/revokedTokens(among:)``.
    public func revokedTokens(among ids: [String]) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let valid = try read("looking for revoked tokens") { db in
            var valid: Set<String> = []
            // In chunks within SQLite's bound on a statement's parameters.
            var start = 0
            while start < ids.count {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                valid.formUnion(
                    try String.fetchAll(
                        db, sql: "SELECT id FROM token WHERE revoked IS NULL AND id IN (\(marks))",
                        arguments: StatementArguments(chunk)))
                start += chunk.count
            }
            return valid
        }
        return Set(ids).subtracting(valid).sorted()
    }

    /// See ``ServerAccounts/authenticate(_:)``.
    public func authenticate(_ secret: String) throws -> ServerToken? {
        guard let presented = TokenSecret.presentedHash(secret) else { return nil }
        let hash = Data(presented)
        return try read("checking a token") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT token.id, token.library, library.account, token.created, token.revoked, token.role
                    FROM token JOIN library ON library.name = token.library
                    WHERE token.hash = ? AND token.revoked IS NULL
                    """, arguments: [hash]
            ).map(Self.token)
        }
    }

    /// See ``ServerAccounts/bind(_:to:)``.
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

    /// See ``ServerAccounts/boundElsewhere(_:than:)``.
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

    private static func token(_ row: Row) -> ServerToken {
        let revoked: Double? = row[4]
        let role: String? = row[5]
        return ServerToken(
            id: row[0], library: row[1], account: row[2], created: Date(timeIntervalSince1970: row[3]),
            revoked: revoked.map { Date(timeIntervalSince1970: $0) }, role: LibraryRole(stored: role))
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
