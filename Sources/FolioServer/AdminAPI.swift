import Foundation

/// The JSON bodies of the admin API, `/v1/libraries/NAME/admin/…` (docs/protocol.md, "Admin API"): what a token with
/// the ``LibraryRole/admin`` role of a library reads and sends to manage it. Dates are ISO 8601 strings; keys are
/// sorted.
public enum AdminAPI {
    /// `GET …/admin`, and the answer of `POST …/admin/offline` and `…/admin/online`: the library's state.
    public struct Status: Codable, Hashable, Sendable {
        /// The library.
        public var library: String
        /// Whether it takes connections.
        public var online: Bool
        /// When it was taken offline, while it is.
        public var offlineSince: Date?
        /// Its connections open on the server that answers.
        public var sessions: Int
        /// The users it is shared with.
        public var shares: Int

        /// Creates a status.
        public init(library: String, online: Bool, offlineSince: Date?, sessions: Int, shares: Int) {
            self.library = library
            self.online = online
            self.offlineSince = offlineSince
            self.sessions = sessions
            self.shares = shares
        }
    }

    /// `GET …/admin/sessions`: a WebSocket connection open to the library on the server that answers.
    public struct Session: Codable, Hashable, Sendable {
        /// Its number on that server, which `DELETE …/admin/sessions/ID` takes.
        public var id: UInt64
        /// Whom it was granted to: a server token's id (`tok_…`), or `user:` and an app's user.
        public var grantee: String
        /// What it may do.
        public var role: LibraryRole
        /// Whether a share (rather than the token) grants it.
        public var shared: Bool
        /// The client's address.
        public var address: String
        /// When it opened.
        public var opened: Date
    }

    /// `GET …/admin/shares`, and the answer of `PUT …/admin/shares`: the library, or one of its documents, shared with
    /// one of the app's users.
    public struct Share: Codable, Hashable, Sendable {
        /// The user, as the `sub` of their app tokens.
        public var subject: String
        /// The document shared (its identity's text); absent for the whole library.
        public var document: String?
        /// What they may do.
        public var role: LibraryRole
        /// When it was first shared.
        public var created: Date
    }

    /// The body of `PUT …/admin/shares`: share the library (or only its `document`) with `subject` as `role` (or
    /// change the role).
    public struct ShareRequest: Codable, Hashable, Sendable {
        /// The user.
        public var subject: String
        /// The role.
        public var role: LibraryRole
        /// The document to share (its identity's text); absent for the whole library.
        public var document: String?

        /// Creates a request.
        public init(subject: String, role: LibraryRole, document: String? = nil) {
            self.subject = subject
            self.role = role
            self.document = document
        }
    }

    /// `GET …/admin/users`: an app's user the library is shared with, connected to it, or both.
    public struct User: Codable, Hashable, Sendable {
        /// The user.
        public var subject: String
        /// The role a share of the whole library gives them, if one does.
        public var sharedRole: LibraryRole?
        /// The documents of the library shared with them one by one (absent from a server from before such shares).
        public var sharedDocuments: Int?
        /// Their connections open to the library on the server that answers.
        public var sessions: Int
        /// Whether the user is revoked on the server (`folio serve user revoke`): every token of theirs is refused.
        public var revoked: Bool
    }

    /// `GET …/admin/tokens`: one of the server's own tokens of the library; never its secret.
    public struct Token: Codable, Hashable, Sendable {
        /// Its id, which `DELETE …/admin/tokens/ID` takes.
        public var id: String
        /// What it grants.
        public var role: LibraryRole
        /// When it was issued.
        public var created: Date
        /// When it was revoked, if it was.
        public var revoked: Date?
    }

    /// The body of `POST …/admin/tokens`: issue a token of the library with `role`.
    public struct TokenRequest: Codable, Hashable, Sendable {
        /// The role.
        public var role: LibraryRole

        /// Creates a request.
        public init(role: LibraryRole) {
            self.role = role
        }
    }

    /// The answer of `POST …/admin/tokens`: the token, and its secret, shown this once.
    public struct IssuedToken: Codable, Hashable, Sendable {
        /// The token.
        public var token: Token
        /// The bearer secret.
        public var secret: String
    }

    /// The body of every refusal and failure (4xx, 5xx).
    public struct Failure: Codable, Hashable, Sendable {
        /// Why.
        public var error: String
    }

    /// The largest request body the admin API reads, in bytes; a larger one is refused (413).
    public static let maximumBodyBytes = 4_096

    /// The encoder of the bodies: ISO 8601 dates, sorted keys.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// The decoder of the bodies.
    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
