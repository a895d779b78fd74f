import FolioCore

/// A version a resolution discarded: kept in history, listed so that nothing is lost silently.
public struct DiscardedVersion<Model: DocumentModel>: Sendable {
    /// The discarded version's head.
    public let head: Change
    /// The device that made it.
    public let device: Device
    /// Its contents.
    public let contents: Model

    /// Creates an entry.
    public init(head: Change, device: Device, contents: Model) {
        self.head = head
        self.device = device
        self.contents = contents
    }
}
