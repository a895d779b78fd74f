import FolioCore
import Foundation

/// What the library knows of a document without opening it: the fold of its lifecycle changes.
public struct DocumentInfo: Hashable, Sendable, Identifiable {
    /// The document's identity.
    public var id: DocumentID
    /// Its display name.
    public var displayName: String
    /// Its type identifier.
    public var typeIdentifier: String
    /// Where it lives.
    public var container: DocumentContainer
    /// Whether it is deleted (it can be restored).
    public var isDeleted: Bool
    /// Whether a delete was overruled because an edit was made concurrently with it (the edit wins; nothing a
    /// device wrote disappears).
    public var restoredByConcurrentEdit = false
    /// The wall time of its latest change.
    public var modificationDate: Timestamp
    /// The wall time of its creation.
    public var creationDate: Timestamp
}
