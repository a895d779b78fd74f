import FolioFiles
import Foundation

/// How a committed change reaches the disk.
///
/// In every mode a change is acknowledged (the call that made it returns) only after its transaction committed, and
/// a process crash after that cannot lose it. The modes differ on power loss.
public enum Durability: Sendable, Hashable {
    /// The write-ahead log is synced (fsync) at every commit: a committed change survives power loss.
    case full
    /// The write-ahead log is synced at checkpoints only (SQLite's `synchronous = NORMAL` in WAL mode): a process
    /// crash loses nothing; a power loss may lose the last commits, never corrupt the store. The default.
    case normal
    /// Nothing is synced (SQLite's `synchronous = OFF`): a process crash still loses nothing, as the operating
    /// system writes out what was committed; a power loss or a system crash may lose commits or damage the store.
    /// For scratch stores and simulations of process crashes.
    case off

    var synchronousPragma: String {
        switch self {
        case .full: "FULL"
        case .normal: "NORMAL"
        case .off: "OFF"
        }
    }
}

extension Durability {
    /// Writes `bytes` as the whole file at `url` through `fileSystem`, so that it is whole or absent: to a file beside
    /// it (`<name>.new`), synced, renamed to `url`, and the directory synced; with ``off``, nothing is synced. When a
    /// step fails, the file beside it is removed.
    ///
    /// - Throws: ``FileSystemError`` of the step that failed, or what a custom file system throws.
    func writeWhole(_ bytes: Data, to url: URL, on fileSystem: any FileSystem) throws {
        let partial = URL(fileURLWithPath: url.path + ".new", isDirectory: false)
        do {
            try fileSystem.writeFile(bytes, to: partial)
            if self != .off { try fileSystem.synchronizeFile(at: partial) }
            try fileSystem.rename(partial, to: url)
        } catch {
            try? fileSystem.remove(at: partial)
            throw error
        }
        if self != .off { try fileSystem.synchronizeDirectory(at: url.deletingLastPathComponent()) }
    }
}
