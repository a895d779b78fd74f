/// Where a ``FileSystemError`` happened: the file-system call and the path it was about, as the error's
/// `init(_:operation:path:)` records them.
public struct FileOperation: Hashable, Sendable, CustomStringConvertible {
    /// The call, such as "fsync", "open for writing" or "rename to '/tmp/b'".
    public var operation: String
    /// The path the call was about, as the file system names it.
    public var path: String

    /// "fsync of '/tmp/a'".
    public var description: String { "\(operation) of '\(path)'" }
}
