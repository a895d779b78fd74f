import FolioCore

/// How a person settles competing versions.
public enum ConflictChoice: Hashable, Sendable {
    /// Keep the version with this identifier (``DocumentVersion/id``); the others are discarded (and recorded).
    case version(ChangeHash)
    /// Keep the latest version by wall time, then lamport, then device.
    case latest
}
