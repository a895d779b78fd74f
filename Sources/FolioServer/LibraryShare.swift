import FolioCore
import Foundation

/// A library, or one document of it, shared with one of the app's users: whoever presents a valid app token with that
/// subject may connect to the library with the share's role, whether or not the token names the library
/// (``ServerAccounts/share(_:document:with:role:now:)``). A share of a document lets the user's connections sync that
/// document alone (with the user's other shared documents of the library); a share of the whole library, when there
/// is one, grants all of it.
public struct LibraryShare: Hashable, Sendable {
    /// The library shared.
    public var library: String
    /// The document shared; `nil` for the whole library.
    public var document: DocumentID?
    /// The user it is shared with, as the `sub` of their app tokens.
    public var subject: String
    /// What the user may do there.
    public var role: LibraryRole
    /// When it was shared (the first time; changing the role keeps it).
    public var created: Date

    /// Creates a share's description.
    public init(library: String, document: DocumentID? = nil, subject: String, role: LibraryRole, created: Date) {
        self.library = library
        self.document = document
        self.subject = subject
        self.role = role
        self.created = created
    }

    /// How an account database keeps ``document``: the identity's text, or empty for the whole library.
    package var storedDocument: String { document?.description ?? "" }

    /// The document an account database keeps as `stored`: `nil` for the whole library (empty); not `readable` for
    /// text that is no identity (damaged), a row that then shares nothing and is left out.
    package static func document(stored: String) -> (document: DocumentID?, readable: Bool) {
        if stored.isEmpty { return (nil, true) }
        guard let document = DocumentID(stored) else { return (nil, false) }
        return (document, true)
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
