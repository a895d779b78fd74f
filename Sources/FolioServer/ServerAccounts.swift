import Crypto
import FolioCore
import Foundation

/// A token as listed: never its secret.
public struct ServerToken: Hashable, Sendable {
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
    /// What it grants in its library: `write` unless it was issued with another role.
    public var role: LibraryRole

    /// Creates a token's description.
    public init(
        id: String, library: String, account: String, created: Date, revoked: Date?, role: LibraryRole = .write
    ) {
        self.id = id
        self.library = library
        self.account = account
        self.created = created
        self.revoked = revoked
        self.role = role
    }
}

/// A token just issued: its id and its secret, shown once.
public struct IssuedToken: Hashable, Sendable {
    /// The token's description.
    public var token: ServerToken
    /// The bearer secret a client sends (`Authorization: Bearer <secret>`).
    public var secret: String

    /// Creates an issued token's description.
    public init(token: ServerToken, secret: String) {
        self.token = token
        self.secret = secret
    }
}

/// The server's accounts, libraries, bearer tokens and device bindings: ``AccountStore`` in the data directory's
/// SQLite file, or another implementation (the FolioPostgres module keeps them in PostgreSQL).
///
/// A library belongs to one account. A token grants one library; only its SHA-256 hash is stored, so the storage does
/// not hold a usable token. A device is bound to the library it was first seen in, and cannot write into another.
/// Every call is synchronous and may block.
public protocol ServerAccounts: AnyObject, Sendable {
    /// Issues a token for `library`, creating the library in `account` if it is new.
    ///
    /// - Parameters:
    ///   - library: the library's name (see ``AccountNames/isValid(_:)``).
    ///   - account: the account it belongs to.
    ///   - role: what it grants there (``LibraryRole/read`` receives the library but writes nothing to it).
    ///   - now: the issue time.
    ///   - random: the source of the secret and the id.
    /// - Throws: ``ServerError`` `invalidName`, `conflict` when the library belongs to another account, `storage`.
    func createToken(
        library: String, account: String, role: LibraryRole, now: Date, random: inout some RandomNumberGenerator
    ) throws -> IssuedToken
    /// Every token, valid or revoked, in the order issued.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func tokens() throws -> [ServerToken]
    /// Revokes the token `id`: new connections presenting it are refused; a running server closes those already open
    /// within a few seconds (4401).
    ///
    /// - Throws: ``ServerError`` `notFound` when no token has that id, `storage`.
    func revoke(_ id: String, now: Date) throws
    /// The ids of `ids` whose tokens are revoked (or gone), in ascending order: what a running server asks of the
    /// tokens its connections presented, whichever process revoked them and whatever its clock said.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func revokedTokens(among ids: [String]) throws -> [String]
    /// The valid token whose secret is `secret`, or `nil`.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func authenticate(_ secret: String) throws -> ServerToken?
    /// Binds each device of `devices` not seen before to `library`, and returns those already bound to another
    /// library (in the order given): they cannot write into `library`.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func bind(_ devices: [DeviceID], to library: String) throws -> [DeviceID]
    /// The devices of `devices` bound to a library other than `library`, in the order given: they cannot write into
    /// `library`. Binds nothing (see ``bind(_:to:)``, called once a device proved its key).
    ///
    /// - Throws: ``ServerError`` `storage`.
    func boundElsewhere(_ devices: [DeviceID], than library: String) throws -> [DeviceID]
    /// Revokes the app's user `subject` (the `sub` of the tokens the app's backend signs, see ``AppTokenKeys``):
    /// their tokens are refused from now on, whatever their expiry, and a running server closes their open
    /// connections within about a second (4401). Revoking again keeps the first time.
    ///
    /// - Throws: ``ServerError`` `invalidName` for a subject that is empty, longer than
    ///   ``AppTokenKeys/maximumSubjectBytes`` or holds a control character, `storage`.
    func revokeUser(_ subject: String, now: Date) throws
    /// Lets the revoked user `subject` in again: their valid tokens are accepted from now on.
    ///
    /// - Throws: ``ServerError`` `notFound` when the user is not revoked, `storage`.
    func restoreUser(_ subject: String) throws
    /// The revoked users, in the order revoked.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func revokedUsers() throws -> [RevokedUser]
    /// The subjects of `subjects` that are revoked, ascending: what a server asks of the users its connections and
    /// upgrades present.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func revokedUsers(among subjects: [String]) throws -> [String]
    /// Shares `library` (or only its `document`) with the app's user `subject` as `role`, or gives an existing share
    /// that role: from now on their app tokens open the library, whichever libraries the tokens name (a token that
    /// names the library keeps the role it carries). A share of the library grants all of it; without one, the
    /// user's connections sync the documents shared with them alone, each with its share's role. A running server
    /// closes the connections of the old grant within about a second (4409), so that they come back with the new one.
    ///
    /// - Throws: ``ServerError`` `invalidName` for a library name or subject that is not valid, `storage`.
    func share(_ library: String, document: DocumentID?, with subject: String, role: LibraryRole, now: Date) throws
    /// Ends the share of `library` (or of its `document`) with `subject`: a running server closes the connections
    /// whose grant it changes within about a second (4401 when nothing of the library is granted to them any more,
    /// else 4409, and the client comes back with what is left), and refuses what it no longer grants from then on.
    ///
    /// - Throws: ``ServerError`` `notFound` when the library (or document) is not shared with that user, `storage`.
    func unshare(_ library: String, document: DocumentID?, from subject: String) throws
    /// The shares of `library`, of the library and of its documents, in the order shared.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func shares(of library: String) throws -> [LibraryShare]
    /// The shares of `libraries` with users of `subjects`, by library and then subject: what a server asks of the
    /// users whose connections a share opened, and of a user at the upgrade.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func shares(among subjects: [String], in libraries: [String]) throws -> [LibraryShare]
    /// Takes `library` offline: a running server closes its connections within about a second (4503) and refuses new
    /// ones (4503) until ``bringOnline(_:)``; the admin API still answers. Taking it offline again keeps the first
    /// time.
    ///
    /// - Throws: ``ServerError`` `invalidName`, `storage`.
    func takeOffline(_ library: String, now: Date) throws
    /// Brings the offline `library` back: it takes connections again.
    ///
    /// - Throws: ``ServerError`` `notFound` when the library is not offline, `storage`.
    func bringOnline(_ library: String) throws
    /// The libraries taken offline, by name.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func offlineLibraries() throws -> [OfflineLibrary]
    /// When `library` was taken offline, or `nil` while it is online.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func offlineSince(_ library: String) throws -> Date?
    /// The tokens of `library`, valid or revoked, in the order issued.
    ///
    /// - Throws: ``ServerError`` `storage`.
    func tokens(of library: String) throws -> [ServerToken]
}

/// An app's user whose tokens the server refuses (``ServerAccounts/revokeUser(_:now:)``).
public struct RevokedUser: Hashable, Sendable {
    /// The user, as the `sub` of their tokens.
    public var subject: String
    /// When they were revoked.
    public var revoked: Date

    /// Creates a revoked user's description.
    public init(subject: String, revoked: Date) {
        self.subject = subject
        self.revoked = revoked
    }
}

extension ServerAccounts {
    /// Issues a token with the system's secure random generator.
    ///
    /// - Throws: ``ServerError``, as ``createToken(library:account:role:now:random:)``.
    public func createToken(
        library: String, account: String = "default", role: LibraryRole = .write, now: Date = Date()
    ) throws -> IssuedToken {
        var random = SystemRandomNumberGenerator()
        return try createToken(library: library, account: account, role: role, now: now, random: &random)
    }

    /// Issues a `write` token (see ``createToken(library:account:role:now:random:)``).
    ///
    /// - Throws: ``ServerError``, as ``createToken(library:account:role:now:random:)``.
    public func createToken(
        library: String, account: String, now: Date, random: inout some RandomNumberGenerator
    ) throws -> IssuedToken {
        try createToken(library: library, account: account, role: .write, now: now, random: &random)
    }

    /// Revokes the user `subject` now (see ``revokeUser(_:now:)``).
    ///
    /// - Throws: ``ServerError``, as ``revokeUser(_:now:)``.
    public func revokeUser(_ subject: String) throws {
        try revokeUser(subject, now: Date())
    }

    /// Shares the whole of `library` with `subject` as `role` (see ``share(_:document:with:role:now:)``).
    ///
    /// - Throws: ``ServerError``, as ``share(_:document:with:role:now:)``.
    public func share(_ library: String, with subject: String, role: LibraryRole, now: Date) throws {
        try share(library, document: nil, with: subject, role: role, now: now)
    }

    /// Ends the share of the whole of `library` with `subject` (see ``unshare(_:document:from:)``).
    ///
    /// - Throws: ``ServerError``, as ``unshare(_:document:from:)``.
    public func unshare(_ library: String, from subject: String) throws {
        try unshare(library, document: nil, from: subject)
    }

    /// Why a share of `library` (or of its `document`) with `subject` cannot be found: for ``unshare(_:document:from:)``.
    package static func notShared(_ library: String, _ document: DocumentID?, _ subject: String) -> ServerError {
        ServerError(
            .notFound,
            (document.map { "document \($0) of library \(library)" } ?? "library \(library)")
                + " is not shared with \(subject.debugDescription)")
    }

    /// Refuses a subject a user could not have (see ``AppTokenKeys/maximumSubjectBytes``): what every implementation
    /// of ``revokeUser(_:now:)`` and ``share(_:with:role:now:)`` checks first.
    package static func checkSubject(_ subject: String) throws {
        guard !subject.isEmpty, subject.utf8.count <= AppTokenKeys.maximumSubjectBytes else {
            throw ServerError(
                .invalidName,
                "a user's subject has 1 to \(AppTokenKeys.maximumSubjectBytes) bytes, not \(subject.utf8.count)")
        }
        // As in a token (`AppTokenKeys`): a NUL, say, would not be one user in every database.
        if subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw ServerError(.invalidName, "a user's subject holds no control character")
        }
        // Nor would two spellings of one text, which Swift takes as equal and a database does not.
        guard AppTokenKeys.isNormalized(subject) else {
            throw ServerError(.invalidName, "a user's subject is in Unicode's normalization form C")
        }
    }

    /// Refuses what cannot be shared: a library name that is not valid, or a subject a user could not have.
    package static func checkShare(_ library: String, _ subject: String) throws {
        try checkSubject(subject)
        try AccountNames.check(library: library)
    }

    /// Revokes the token `id` now (see ``revoke(_:now:)``).
    ///
    /// - Throws: ``ServerError``, as ``revoke(_:now:)``.
    public func revoke(_ id: String) throws {
        try revoke(id, now: Date())
    }
}

/// The names libraries and accounts may have.
public enum AccountNames {
    /// The longest library or account name accepted.
    public static let maximumLength = 64

    /// Whether `name` is acceptable as a library or account name: 1 to 64 ASCII letters, digits, `-`, `_` or `.`,
    /// not starting with `.`.
    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maximumLength, !name.hasPrefix(".") else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }

    /// Throws ``ServerError`` `invalidName` unless `library` is a valid library name.
    package static func check(library: String) throws {
        guard isValid(library) else {
            throw ServerError(.invalidName, "library name \(library.debugDescription) is not valid")
        }
    }

    /// Throws ``ServerError`` `invalidName` unless both names are valid.
    package static func check(library: String, account: String) throws {
        for (what, name) in [("library", library), ("account", account)] where !isValid(name) {
            throw ServerError(
                .invalidName,
                "\(what) name \(name.debugDescription) is not valid: use 1 to \(maximumLength) letters, digits, '-', '_' or '.', not starting with '.'"
            )
        }
    }
}

/// A token's secret, public id and the hash that is stored of the secret.
package struct TokenSecret {
    /// The bearer secret: `folio_` and 64 hex digits.
    package var secret: String
    /// The public id: `tok_` and 12 hex digits.
    package var id: String
    /// The SHA-256 hash of the secret, which is all the storage keeps of it.
    package var hash: [UInt8]

    /// A new secret and id drawn from `random`.
    package init(random: inout some RandomNumberGenerator) {
        secret = "folio_" + Self.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
        id = "tok_" + Self.hex((0..<6).map { _ in UInt8.random(in: 0...255, using: &random) })
        hash = Self.hash(secret)
    }

    /// The hash of a presented secret, or `nil` for one longer than any secret issued.
    package static func presentedHash(_ secret: String) -> [UInt8]? {
        secret.utf8.count <= 256 ? hash(secret) : nil
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
}
