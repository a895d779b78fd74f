import FolioSync

/// What a person may do in a library, as a token grants it.
///
/// The roles are ordered: each may do what the ones before it may.
public enum LibraryRole: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Receives the library's documents and their changes, and shows presence; sends no change and no blob. The
    /// server stores nothing a `read` connection sends of either: its first change or blob closes it (4405).
    case read
    /// Reads and writes: what the server's own tokens grant.
    case write
    /// Writes, and is meant to settle conflicts for others (the conflict desk); served as `write` for now.
    case resolve
    /// Resolves, and is meant to share and revoke (the admin API); served as `write` for now.
    case admin

    /// Whether the role may send changes and blobs.
    public var writes: Bool { self >= .write }

    /// Whether `lhs` may do less than `rhs`.
    public static func < (lhs: LibraryRole, rhs: LibraryRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// What a connection was granted: by one of the server's own tokens, or by a token the app's backend signed.
struct AccessGrant: Sendable, Hashable {
    /// The key its connections are counted and closed by: the server token's id (`tok_…`), or `user:` and the app
    /// token's subject (so that an app's user has at most `connectionsPerToken` connections, whatever token they
    /// present).
    var key: String
    /// The library the connection serves.
    var library: String
    /// What it may do there.
    var role: LibraryRole
    /// When the grant ends (an app token's expiry); `nil` for a server token, which lasts until it is revoked.
    var expires: ContinuousClock.Instant?
}

extension SyncMessage {
    /// Whether the message brings the server something to store: changes (as `changes` or a run) or blobs. What a
    /// `read` connection may not send.
    var writes: Bool {
        switch self {
        case .changes(_, let changes, _): !changes.isEmpty
        case .run: true
        case .blobs(let blobs, _): !blobs.isEmpty
        case .hello, .request, .done, .wantBlobs: false
        }
    }
}
