import Foundation

extension FileSystem {
    /// Creates the directory at `url` unless something is there already, and syncs the directory holding it, so
    /// that its entry is durable before anything synced inside it counts on it: a power cut could otherwise keep a
    /// file synced in the new directory but lose the directory itself.
    ///
    /// - Throws: ``FileSystemError``.
    public func createDirectoryDurably(at url: URL) throws {
        guard try itemKind(at: url) == .absent else { return }
        try createDirectory(at: url)
        try synchronizeDirectory(at: url.deletingLastPathComponent())
    }

    /// Creates the directory at `url` and every missing directory above it, as `mkdir -p` does; another process
    /// making one of them at the same time is not an error. Syncs nothing.
    ///
    /// A symbolic link at `url` or above is not followed here, and is taken as the directory it names: the paths
    /// below it go through it (a user's work directory under `/tmp` on a system where that is a link).
    ///
    /// - Throws: ``FileSystemError``; `notDirectory` (with that item's path) when `url` or an item above it is a
    ///   file or a special file.
    public func createDirectories(at url: URL) throws {
        switch try itemKind(at: url) {
        case .directory, .symbolicLink:
            return
        case .file, .other:
            throw FileSystemError(.notDirectory, operation: "mkdir", path: PosixFileSystem.path(of: url))
        case .absent:
            let parent = url.deletingLastPathComponent()
            if PosixFileSystem.path(of: parent) != PosixFileSystem.path(of: url) { try createDirectories(at: parent) }
            do {
                try createDirectory(at: url)
            } catch let error as FileSystemError where error.code == .exists {
                // Made meanwhile by someone else: fine if it is a directory.
                guard try itemKind(at: url) == .directory else { throw error }
            }
        }
    }
}
