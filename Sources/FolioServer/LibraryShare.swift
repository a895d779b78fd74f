import Foundation

/// A library shared with one of the app's users: whoever presents a valid app token with that subject may connect to
/// the library with the share's role, whether or not the token names the library
/// (``ServerAccounts/share(_:with:role:now:)``).
public struct LibraryShare: Hashable, Sendable {
    /// The library shared.
    public var library: String
    /// The user it is shared with, as the `sub` of their app tokens.
    public var subject: String
    /// What the user may do there.
    public var role: LibraryRole
    /// When it was shared (the first time; changing the role keeps it).
    public var created: Date

    /// Creates a share's description.
    public init(library: String, subject: String, role: LibraryRole, created: Date) {
        self.library = library
        self.subject = subject
        self.role = role
        self.created = created
    }
}

/// A library taken offline: the server closes its connections (4503) and refuses new ones until it is back
/// (``ServerAccounts/takeOffline(_:now:)``).
public struct OfflineLibrary: Hashable, Sendable {
    /// The library.
    public var library: String
    /// When it was taken offline.
    public var since: Date

    /// Creates an offline library's description.
    public init(library: String, since: Date) {
        self.library = library
        self.since = since
    }
}
