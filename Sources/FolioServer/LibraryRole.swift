import FolioCore
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
    /// Writes, and settles conflicts: served as `write` (a resolution is a change like any other).
    case resolve
    /// Resolves, and manages the library through the admin API (`/v1/libraries/NAME/admin/…`): its sessions, shares,
    /// tokens and whether it is online.
    case admin

    /// Whether the role may send changes and blobs.
    public var writes: Bool { self >= .write }

    /// A role as an account database stores it; one it does not know (written by a newer Folio, or damaged) grants
    /// the least, `read`.
    public init(stored: String?) {
        self = stored.flatMap(LibraryRole.init(rawValue:)) ?? .read
    }

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
    /// What it may do there: in the whole library, or, for a grant of single documents, the most it may do in one.
    var role: LibraryRole
    /// The documents the grant is limited to, each with what it may do there; `nil`: the whole library. A grant of
    /// documents never administers the library.
    var documents: [DocumentID: LibraryRole]?
    /// The documents of the library the app token names itself (its `documents` claim), kept so that the grant can
    /// be worked out again when the user's shares change.
    var claimed: [DocumentID: LibraryRole] = [:]
    /// When the grant ends (an app token's expiry); `nil` for a server token, which lasts until it is revoked.
    var expires: ContinuousClock.Instant?
    /// Whether a share of the library with the app's user grants it (the token does not name the library): the
    /// connection closes when the share ends or its role changes.
    var viaShare = false
    /// The app's user, as the server records them for the devices of the grant's connections (`Device.person`):
    /// the app token's `name` claim, else its subject; `nil` for a server token, whose devices say it themselves.
    var person: String?

    /// What the grant lets a connection sync, as the server tells a client (`SyncFrame.scope`).
    var scope: SyncScope {
        documents.map { .documents($0.mapValues(\.writes)) } ?? .library(writes: role.writes)
    }

    /// What the app token's own `documents` claim (`claimed`) and the user's shares of the library grant together:
    /// a share of the whole library grants all of it with its role; otherwise the documents claimed and shared, each
    /// with the most either gives. `nil` when nothing of the library is granted.
    static func throughShares(claimed: [DocumentID: LibraryRole], shares: [LibraryShare]) -> (
        role: LibraryRole, documents: [DocumentID: LibraryRole]?
    )? {
        if let library = shares.first(where: { $0.document == nil }) { return (library.role, nil) }
        var documents = claimed
        for share in shares {
            guard let document = share.document else { continue }
            documents[document] = max(documents[document] ?? share.role, share.role)
        }
        guard let most = documents.values.max() else { return nil }
        return (most, documents)
    }
}

extension SyncMessage {
    /// What the message costs the allowance of ``ServerLimits/changesPerSecond``: its changes (as `changes` or a run),
    /// a `blobs` message one for each 64 KiB (or part) of its blobs; at least one for any upload, nothing for the
    /// rest.
    var quotaCost: Int {
        switch self {
        case .changes(_, let changes, _): max(1, changes.count)
        case .run(let run): max(1, run.count)
        case .blobs(let blobs, _): max(1, (blobs.reduce(0) { $0 + $1.count } + 0xFFFF) >> 16)
        case .hello, .request, .done, .wantBlobs: 0
        }
    }

    /// Whether the message is one that brings the server something to store, or would if it held anything: changes
    /// (as `changes` or a run) or blobs, empty or not. A `read` connection sends none (the server never asks it for
    /// any), and is closed (4405) when it does.
    var isUpload: Bool {
        switch self {
        case .changes, .run, .blobs: true
        case .hello, .request, .done, .wantBlobs: false
        }
    }
}
