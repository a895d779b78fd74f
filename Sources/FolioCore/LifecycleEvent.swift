import Foundation

/// A change to a document's existence, name or place.
public enum LifecycleEvent: Hashable, Sendable {
    /// The document came into being with this name, type identifier and container.
    case create(name: String, type: String, container: DocumentContainer)
    /// The document's display name changed.
    case rename(to: String)
    /// The document moved between containers.
    case move(to: DocumentContainer)
    /// The document was deleted (it can be restored: history is kept).
    case delete
    /// A deleted document was brought back.
    case restore
    /// A person named the version this change is made on (its parents): a named version of the document's
    /// history, kept on every device (`Document.markVersion(_:)`). The document's contents, name and place are
    /// unchanged.
    case markVersion(name: String)
}
