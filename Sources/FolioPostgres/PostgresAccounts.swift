import FolioCore
import FolioServer
import Foundation
import PostgresNIO

/// The server's accounts, libraries, tokens and device bindings (`ServerAccounts`) in PostgreSQL, shared by every
/// server process of the database: a token issued or revoked through one is known to all.
public final class PostgresAccounts: ServerAccounts {
    let database: PostgresServerDatabase

    /// The accounts of `database`.
    public init(database: PostgresServerDatabase) {
        self.database = database
    }

    /// See `ServerAccounts/createToken(library:account:role:now:random:)`.
    public func createToken(
        library: String, account: String, role: LibraryRole, now: Date, random: inout some RandomNumberGenerator
    ) throws -> IssuedToken {
        try AccountNames.check(library: library, account: account)
        let drawn = TokenSecret(random: &random)
        let (id, hash) = (drawn.id, drawn.hash)
        let created = now.timeIntervalSince1970
        let logger = database.logger
        try database.run("issuing a token for library \(library)") { client in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "INSERT INTO folio_library (name, account) VALUES (\(library), \(account)) ON CONFLICT DO NOTHING",
                    logger: logger)
                var owner: String?
                for try await name in try await connection.query(
                    "SELECT account FROM folio_library WHERE name = \(library)", logger: logger
                ).decode(String.self) {
                    owner = name
                }
                guard owner == account else {
                    throw ServerError(
                        .conflict, "library \(library) belongs to account \(owner ?? "?"), not \(account)")
                }
                let bytes = Data(hash)
                let stored = role.rawValue
                try await connection.query(
                    """
                    INSERT INTO folio_token (id, hash, library, created, role)
                    VALUES (\(id), \(bytes), \(library), \(created), \(stored))
                    """,
                    logger: logger)
            }
        }
        return IssuedToken(
            token: ServerToken(
                id: id, library: library, account: account, created: Date(timeIntervalSince1970: created),
                revoked: nil, role: role),
            secret: drawn.secret)
    }

    /// See `ServerAccounts/tokens()`.
    public func tokens() throws -> [ServerToken] {
        try select(
            "listing tokens",
            """
            SELECT t.id, t.library, l.account, t.created, t.revoked, t.role FROM folio_token t
            JOIN folio_library l ON l.name = t.library ORDER BY t.created, t.id
            """)
    }

    /// See `ServerAccounts/revoke(_:now:)`.
    public func revoke(_ id: String, now: Date) throws {
        let revoked = now.timeIntervalSince1970
        let logger = database.logger
        let found = try database.run("revoking token \(id)") { client in
            var found = false
            for try await _ in try await client.query(
                "UPDATE folio_token SET revoked = coalesce(revoked, \(revoked)) WHERE id = \(id) RETURNING id",
                logger: logger)
            {
                found = true
            }
            return found
        }
        guard found else { throw ServerError(.notFound, "there is no token \(id)") }
    }

    /// See `ServerAccounts/revokedTokens(among:)`.
    public func revokedTokens(among ids: [String]) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let logger = database.logger
        let valid: Set<String> = try database.run("looking for revoked tokens") { client in
            var valid: Set<String> = []
            for try await id in try await client.query(
                "SELECT id FROM folio_token WHERE revoked IS NULL AND id = ANY(\(ids))", logger: logger
            ).decode(String.self) {
                valid.insert(id)
            }
            return valid
        }
        return Set(ids).subtracting(valid).sorted()
    }

    /// See `ServerAccounts/authenticate(_:)`.
    public func authenticate(_ secret: String) throws -> ServerToken? {
        guard let presented = TokenSecret.presentedHash(secret) else { return nil }
        let hash = Data(presented)
        return try select(
            "checking a token",
            """
            SELECT t.id, t.library, l.account, t.created, t.revoked, t.role FROM folio_token t
            JOIN folio_library l ON l.name = t.library WHERE t.hash = \(hash) AND t.revoked IS NULL
            """
        ).first
    }

    /// See `ServerAccounts/bind(_:to:)`.
    public func bind(_ devices: [DeviceID], to library: String) throws -> [DeviceID] {
        guard !devices.isEmpty else { return [] }
        let logger = database.logger
        return try database.run("binding devices to library \(library)") { client in
            var foreign: [DeviceID] = []
            for device in devices {
                let id = Data(device.uuid.bytes)
                var bound: String?
                // The binding made here, or the one made first (by any server): an update that changes nothing
                // returns it, where a second statement could not see a row another transaction just made.
                for try await name in try await client.query(
                    """
                    INSERT INTO folio_device (id, library) VALUES (\(id), \(library))
                    ON CONFLICT (id) DO UPDATE SET library = folio_device.library RETURNING library
                    """, logger: logger
                ).decode(String.self) {
                    bound = bound ?? name
                }
                if bound != library { foreign.append(device) }
            }
            return foreign
        }
    }

    /// See `ServerAccounts/boundElsewhere(_:than:)`.
    public func boundElsewhere(_ devices: [DeviceID], than library: String) throws -> [DeviceID] {
        guard !devices.isEmpty else { return [] }
        let logger = database.logger
        return try database.run("looking up the libraries of devices") { client in
            var foreign: [DeviceID] = []
            for device in devices {
                let id = Data(device.uuid.bytes)
                for try await bound in try await client.query(
                    "SELECT library FROM folio_device WHERE id = \(id)", logger: logger
                ).decode(String.self) where bound != library {
                    foreign.append(device)
                }
            }
            return foreign
        }
    }

    /// See `ServerAccounts/revokeUser(_:now:)`.
    public func revokeUser(_ subject: String, now: Date) throws {
        try Self.checkSubject(subject)
        let revoked = now.timeIntervalSince1970
        let logger = database.logger
        try database.run("revoking user \(subject.debugDescription)") { client in
            _ = try await client.query(
                """
                INSERT INTO folio_revoked_user (subject, revoked) VALUES (\(subject), \(revoked))
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    /// See `ServerAccounts/restoreUser(_:)`.
    public func restoreUser(_ subject: String) throws {
        // A text of PostgreSQL holds no NUL: no revoked user has one.
        guard !subject.utf8.contains(0) else {
            throw ServerError(.notFound, "user \(subject.debugDescription) is not revoked")
        }
        let logger = database.logger
        let found = try database.run("restoring user \(subject.debugDescription)") { client in
            var found = false
            for try await _ in try await client.query(
                "DELETE FROM folio_revoked_user WHERE subject = \(subject) RETURNING subject", logger: logger)
            {
                found = true
            }
            return found
        }
        guard found else { throw ServerError(.notFound, "user \(subject.debugDescription) is not revoked") }
    }

    /// See `ServerAccounts/revokedUsers()`.
    public func revokedUsers() throws -> [RevokedUser] {
        let logger = database.logger
        return try database.run("listing revoked users") { client in
            var users: [RevokedUser] = []
            for try await (subject, revoked) in try await client.query(
                "SELECT subject, revoked FROM folio_revoked_user ORDER BY revoked, subject", logger: logger
            ).decode((String, Double).self) {
                users.append(RevokedUser(subject: subject, revoked: Date(timeIntervalSince1970: revoked)))
            }
            return users
        }
    }

    /// See `ServerAccounts/revokedUsers(among:)`.
    public func revokedUsers(among subjects: [String]) throws -> [String] {
        // A text of PostgreSQL holds no NUL, and no revoked user has a subject with one.
        let subjects = subjects.filter { !$0.utf8.contains(0) }
        guard !subjects.isEmpty else { return [] }
        let logger = database.logger
        return try database.run("looking for revoked users") { client in
            var revoked: Set<String> = []
            for try await subject in try await client.query(
                "SELECT subject FROM folio_revoked_user WHERE subject = ANY(\(subjects))", logger: logger
            ).decode(String.self) {
                revoked.insert(subject)
            }
            return revoked.sorted()
        }
    }

    /// See `ServerAccounts/share(_:document:with:role:now:)`.
    public func share(_ library: String, document: DocumentID?, with subject: String, role: LibraryRole, now: Date)
        throws
    {
        try Self.checkShare(library, subject)
        let (stored, created, shared) = (role.rawValue, now.timeIntervalSince1970, document?.description ?? "")
        let logger = database.logger
        try database.run("sharing library \(library)") { client in
            if document == nil {
                _ = try await client.query(
                    """
                    INSERT INTO folio_share (library, subject, role, created)
                    VALUES (\(library), \(subject), \(stored), \(created))
                    ON CONFLICT (library, subject) DO UPDATE SET role = excluded.role
                    """, logger: logger)
            } else {
                _ = try await client.query(
                    """
                    INSERT INTO folio_document_share (library, subject, document, role, created)
                    VALUES (\(library), \(subject), \(shared), \(stored), \(created))
                    ON CONFLICT (library, subject, document) DO UPDATE SET role = excluded.role
                    """, logger: logger)
            }
        }
    }

    /// See `ServerAccounts/unshare(_:document:from:)`.
    public func unshare(_ library: String, document: DocumentID?, from subject: String) throws {
        // A text of PostgreSQL holds no NUL: no share has one.
        guard !subject.utf8.contains(0), !library.utf8.contains(0) else {
            throw Self.notShared(library, document, subject)
        }
        let shared = document?.description ?? ""
        let logger = database.logger
        let found = try database.run("ending a share of library \(library)") { client in
            var found = false
            let query: PostgresQuery =
                document == nil
                ? "DELETE FROM folio_share WHERE library = \(library) AND subject = \(subject) RETURNING subject"
                : """
                DELETE FROM folio_document_share
                WHERE library = \(library) AND subject = \(subject) AND document = \(shared) RETURNING subject
                """
            for try await _ in try await client.query(query, logger: logger) {
                found = true
            }
            return found
        }
        guard found else { throw Self.notShared(library, document, subject) }
    }

    /// See `ServerAccounts/shares(of:)`.
    public func shares(of library: String) throws -> [LibraryShare] {
        try selectShares(
            "listing the shares of library \(library)",
            """
            SELECT library, subject, role, created, document FROM (
                SELECT library, subject, role, created, '' AS document FROM folio_share WHERE library = \(library)
                UNION ALL
                SELECT library, subject, role, created, document FROM folio_document_share WHERE library = \(library)
            ) AS shares
            ORDER BY created, subject COLLATE "C", document COLLATE "C"
            """)
    }

    /// See `ServerAccounts/shares(among:in:)`.
    public func shares(among subjects: [String], in libraries: [String]) throws -> [LibraryShare] {
        // A text of PostgreSQL holds no NUL, and no share has a subject or library with one.
        let subjects = Array(Set(subjects.filter { !$0.utf8.contains(0) })).sorted()
        let libraries = Array(Set(libraries.filter { !$0.utf8.contains(0) })).sorted()
        guard !subjects.isEmpty, !libraries.isEmpty else { return [] }
        return try selectShares(
            "looking for shares",
            """
            SELECT library, subject, role, created, '' AS document FROM folio_share
            WHERE subject = ANY(\(subjects)) AND library = ANY(\(libraries))
            UNION ALL
            SELECT library, subject, role, created, document FROM folio_document_share
            WHERE subject = ANY(\(subjects)) AND library = ANY(\(libraries))
            """
        ).sorted { ($0.library, $0.subject, $0.storedDocument) < ($1.library, $1.subject, $1.storedDocument) }
    }

    /// See `ServerAccounts/offlineSince(_:)`.
    public func offlineSince(_ library: String) throws -> Date? {
        guard !library.utf8.contains(0) else { return nil }
        let logger = database.logger
        return try database.run("looking whether library \(library) is offline") { client in
            var since: Date?
            for try await value in try await client.query(
                "SELECT since FROM folio_offline_library WHERE name = \(library)", logger: logger
            ).decode(Double.self) {
                since = Date(timeIntervalSince1970: value)
            }
            return since
        }
    }

    /// See `ServerAccounts/tokens(of:)`.
    public func tokens(of library: String) throws -> [ServerToken] {
        guard !library.utf8.contains(0) else { return [] }
        return try select(
            "listing the tokens of library \(library)",
            """
            SELECT t.id, t.library, l.account, t.created, t.revoked, t.role FROM folio_token t
            JOIN folio_library l ON l.name = t.library WHERE t.library = \(library) ORDER BY t.created, t.id
            """)
    }

    /// See `ServerAccounts/takeOffline(_:now:)`.
    public func takeOffline(_ library: String, now: Date) throws {
        try AccountNames.check(library: library)
        let since = now.timeIntervalSince1970
        let logger = database.logger
        try database.run("taking library \(library) offline") { client in
            _ = try await client.query(
                "INSERT INTO folio_offline_library (name, since) VALUES (\(library), \(since)) ON CONFLICT DO NOTHING",
                logger: logger)
        }
    }

    /// See `ServerAccounts/bringOnline(_:)`.
    public func bringOnline(_ library: String) throws {
        let logger = database.logger
        let found = try database.run("bringing library \(library) online") { client in
            var found = false
            for try await _ in try await client.query(
                "DELETE FROM folio_offline_library WHERE name = \(library) RETURNING name", logger: logger)
            {
                found = true
            }
            return found
        }
        guard found else { throw ServerError(.notFound, "library \(library) is not offline") }
    }

    /// See `ServerAccounts/offlineLibraries()`.
    public func offlineLibraries() throws -> [OfflineLibrary] {
        let logger = database.logger
        return try database.run("listing offline libraries") { client in
            var libraries: [OfflineLibrary] = []
            for try await (name, since) in try await client.query(
                "SELECT name, since FROM folio_offline_library ORDER BY name COLLATE \"C\"", logger: logger
            ).decode((String, Double).self) {
                libraries.append(OfflineLibrary(library: name, since: Date(timeIntervalSince1970: since)))
            }
            return libraries
        }
    }

    private func selectShares(_ action: String, _ query: PostgresQuery) throws -> [LibraryShare] {
        let logger = database.logger
        return try database.run(action) { client in
            var shares: [LibraryShare] = []
            for try await (library, subject, role, created, document) in try await client.query(query, logger: logger)
                .decode((String, String, String, Double, String).self)
            {
                // A document that is no identity (damaged) shares nothing.
                let shared = LibraryShare.document(stored: document)
                guard shared.readable else { continue }
                shares.append(
                    LibraryShare(
                        library: library, document: shared.document, subject: subject, role: LibraryRole(stored: role),
                        created: Date(timeIntervalSince1970: created)))
            }
            return shares
        }
    }

    private func select(_ action: String, _ query: PostgresQuery) throws -> [ServerToken] {
        let logger = database.logger
        return try database.run(action) { client in
            var tokens: [ServerToken] = []
            for try await (id, library, account, created, revoked, role) in try await client.query(
                query, logger: logger
            )
            .decode((String, String, String, Double, Double?, String).self) {
                tokens.append(
                    ServerToken(
                        id: id, library: library, account: account, created: Date(timeIntervalSince1970: created),
                        revoked: revoked.map { Date(timeIntervalSince1970: $0) }, role: LibraryRole(stored: role)))
            }
            return tokens
        }
    }
}
