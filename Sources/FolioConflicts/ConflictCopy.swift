import FolioCore

/// A new document that keeps a version a `keepBoth` settlement does not keep here.
public struct ConflictCopy<Model: DocumentModel>: Sendable {
    /// The copy's identity: derived from the document's identity and the change that made the copied contents, so
    /// every device that settles the same conflict names the same copy.
    public let id: DocumentID
    /// Its display name, "NAME (conflict from DEVICE)".
    public let name: String
    /// The contents it starts with.
    public let contents: Model

    /// Creates a copy.
    public init(id: DocumentID, name: String, contents: Model) {
        self.id = id
        self.name = name
        self.contents = contents
    }
}
