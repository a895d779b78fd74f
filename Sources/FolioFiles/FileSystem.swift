import Foundation

/// The file I/O that the save pipeline and the document library do, behind a protocol so it can be replaced.
///
/// ``PosixFileSystem`` is the real one; ``FaultInjectingFileSystem`` wraps another to crash or fail at a chosen
/// step, which is how the tests and the scenario simulator prove that a save is never torn. Every call is
/// synchronous and names its item by URL; nothing follows a symbolic link unless it says so, and none does.
///
/// The mutating calls (`createDirectory`, `writeFile`, `synchronizeFile`, `synchronizeDirectory`, `rename`,
/// `remove`) are the "steps" a fault injector counts; the others only read.
public protocol FileSystem: Sendable {
    /// What is at `url`, without following a symbolic link there (`lstat`).
    ///
    /// - Throws: ``FileSystemError`` when the item cannot be examined (an absent item is not an error).
    func itemKind(at url: URL) throws(FileSystemError) -> FileItemKind

    /// The kind, size and modification time of the item at `url`, without following a symbolic link there.
    ///
    /// - Throws: ``FileSystemError``, `notFound` when nothing is there.
    func attributes(at url: URL) throws(FileSystemError) -> FileAttributes

    /// The whole contents of the regular file at `url`.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` for a link and `notRegularFile` for a directory, FIFO or
    ///   device, which are never opened for reading.
    func contents(of url: URL) throws(FileSystemError) -> Data

    /// The names in the directory at `url`, without `.` and `..`, sorted by their UTF-8 bytes.
    ///
    /// - Throws: ``FileSystemError``; `notDirectory` when `url` is not a directory.
    func contentsOfDirectory(at url: URL) throws(FileSystemError) -> [String]

    /// Creates one directory (its parent must exist).
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is already there.
    func createDirectory(at url: URL) throws(FileSystemError)

    /// Creates or truncates the regular file at `url` and writes all of `data` to it; does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at `url` (it is not followed).
    func writeFile(_ data: Data, to url: URL) throws(FileSystemError)

    /// Flushes the file at `url` to stable storage (`fsync`).
    ///
    /// - Throws: ``FileSystemError``; an I/O error here means the data may not be on disk.
    func synchronizeFile(at url: URL) throws(FileSystemError)

    /// Flushes the directory at `url` (its entries: creations, renames, removals) to stable storage.
    ///
    /// - Throws: ``FileSystemError``.
    func synchronizeDirectory(at url: URL) throws(FileSystemError)

    /// Renames `source` to `destination` atomically, replacing a file (or an empty directory) there.
    ///
    /// - Throws: ``FileSystemError``.
    func rename(_ source: URL, to destination: URL) throws(FileSystemError)

    /// Removes the file, link or whole directory tree at `url`, never following a link.
    ///
    /// - Throws: ``FileSystemError``; `notFound` when nothing is there.
    func remove(at url: URL) throws(FileSystemError)

    /// The time the file system stamps on what is written now, to tell whether a file's recorded modification time
    /// is recent enough that a later write could have left it unchanged. By default the system's clock.
    func currentTime() -> Date
}

extension FileSystem {
    public func currentTime() -> Date { Date() }
}

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

/// The attributes of an item on disk.
public struct FileAttributes: Hashable, Sendable {
    /// What the item is.
    public var kind: FileItemKind
    /// The size in bytes.
    public var size: Int
    /// When the contents last changed.
    public var modificationDate: Date

    /// Creates attributes.
    public init(kind: FileItemKind, size: Int, modificationDate: Date) {
        self.kind = kind
        self.size = size
        self.modificationDate = modificationDate
    }
}
