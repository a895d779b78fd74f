import Foundation

extension FileSystem {
    /// Creates the directory at `url` unless something is there already, and syncs the directory holding it, so
    /// that its entry is durable before anything synced inside it counts on it: a power cut could otherwise keep a
    /// file synced in the new directory but lose the directory itself.
    ///
    /// - Throws: ``FileSystemError``.
    public func createDirectoryDurably(at url: URL) throws(FileSystemError) {
        guard try itemKind(at: url) == .absent else { return }
        try createDirectory(at: url)
        try synchronizeDirectory(at: url.deletingLastPathComponent())
    }
}
