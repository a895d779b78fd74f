import FolioFiles
import Foundation

/// The `folio` tool's own file I/O (scenario files, reports, temporary copies of stores), through a ``FileSystem``
/// so that tests can fail it; the commands use a ``PosixFileSystem``.
enum CommandFiles {
    /// Writes `data` as the whole file at `url`: to a hidden file beside it, then renamed over it, so that the file
    /// is the old one or the new one, never a part. With `makingDirectories`, the directories above it are made.
    ///
    /// - Throws: what the file system throws; the hidden file is removed.
    static func write(_ data: Data, to url: URL, makingDirectories: Bool, on fileSystem: any FileSystem) throws {
        let directory = url.deletingLastPathComponent()
        if makingDirectories { try fileSystem.createDirectories(at: directory) }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).folio-tmp", isDirectory: false)
        do {
            try fileSystem.writeFile(data, to: temporary)
            try fileSystem.rename(temporary, to: url)
        } catch {
            try? fileSystem.remove(at: temporary)
            throw error
        }
    }

    /// Why a file call failed, in a few words: a ``FileSystemError``'s reason ("permission denied"), or any other
    /// error as it describes itself.
    static func reason(_ error: any Error) -> String {
        (error as? FileSystemError)?.code.reason ?? "\(error)"
    }
}
