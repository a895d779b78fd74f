/// The name of one of this device's own values per document in ``LocalStateStore`` (where its file was written, its
/// undo stack…). Each owner of such a value declares its key once, so that no two spell it differently.
public struct LocalStateKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The name stored in the file.
    public let name: String

    /// The key named `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// The name.
    public var description: String { name }

    /// Orders by name (the order values are written in).
    public static func < (lhs: LocalStateKey, rhs: LocalStateKey) -> Bool { lhs.name < rhs.name }
}

/// Whom a sync cursor (``SyncCursors/vector(_:of:)``) is kept for: a peer, or a place a transport reads
/// and writes (a shared folder and a writer in it).
public struct SyncCursorKey: Hashable, Sendable, CustomStringConvertible {
    /// The name stored in the file.
    public let peer: String

    /// The cursor kept for `peer`.
    public init(peer: String) {
        self.peer = peer
    }

    /// The peer's name.
    public var description: String { peer }
}
