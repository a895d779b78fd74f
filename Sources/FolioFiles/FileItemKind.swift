/// What an item on disk is, as `lstat` sees it.
public enum FileItemKind: String, Hashable, Sendable, CustomStringConvertible {
    /// A regular file.
    case file
    /// A directory.
    case directory
    /// A symbolic link (not followed).
    case symbolicLink
    /// A FIFO, socket or device.
    case other
    /// Nothing is there.
    case absent

    /// The kind's name.
    public var description: String { rawValue }
}
