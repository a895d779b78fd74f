import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file I/O Folio does outside SQLite, behind a protocol so it can be replaced: the save pipeline and the document
/// library, the shared sync folder, the store's snapshots, its first image and the check of its header, library copies
/// for reports, the simulator's run directories and the `folio` tool's own files.
///
/// ``PosixFileSystem`` is the real one; FolioTesting's `FaultInjectingFileSystem` wraps another to crash or fail at a
/// chosen step, which is how the tests and the scenario simulator prove that a save, a sync or a snapshot is never
/// torn. Every call is synchronous and names its item by URL; nothing follows a symbolic link unless it says so, and
/// none does.
///
/// The mutating calls (`createDirectory`, `writeFile`, `copyFile`, `synchronizeFile`, `synchronizeDirectory`,
/// `rename`, `link`, `remove`) are the "steps" a fault injector counts; the others only read.
///
/// The calls are declared `throws`; an implementation throws ``FileSystemError`` only. A caller translates a
/// `FileSystemError` into its own errors and wraps any other error a custom file system throws (keeping it as the
/// cause), never assuming that every error is one.
public protocol FileSystem: Sendable {
    /// What is at `url`, without following a symbolic link there (`lstat`).
    ///
    /// - Throws: ``FileSystemError`` when the item cannot be examined (an absent item is not an error).
    func itemKind(at url: URL) throws -> FileItemKind

    /// The kind, size and modification time of the item at `url`, without following a symbolic link there.
    ///
    /// - Throws: ``FileSystemError``, `notFound` when nothing is there.
    func attributes(at url: URL) throws -> FileAttributes

    /// The whole contents of the regular file at `url`.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` for a link and `notRegularFile` for a directory, FIFO or
    ///   device, which are never opened for reading.
    func contents(of url: URL) throws -> Data

    /// The whole contents of the regular file at `url`, which must not hold more than `limit` bytes: for files
    /// anyone could have put there. No more than `limit + 1` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``, and ``FileSystemErrorCode/tooLarge`` when the file holds
    ///   more than `limit` bytes.
    func contents(of url: URL, limit: Int) throws -> Data

    /// The first `count` bytes of the regular file at `url`, or all of them when it holds fewer: for a header. No
    /// more than `count` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``.
    func leadingBytes(of url: URL, count: Int) throws -> Data

    /// The names in the directory at `url`, without `.` and `..`, sorted by their UTF-8 bytes.
    ///
    /// - Throws: ``FileSystemError``; `notDirectory` when `url` is not a directory.
    func contentsOfDirectory(at url: URL) throws -> [String]

    /// Creates one directory (its parent must exist).
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is already there.
    func createDirectory(at url: URL) throws

    /// Creates or truncates the regular file at `url` and writes all of `data` to it; does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at `url` (it is not followed).
    func writeFile(_ data: Data, to url: URL) throws

    /// Creates or truncates the regular file at `destination` and copies into it the contents of the regular file at
    /// `source`, a piece at a time (a large file is never held in memory); does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at either URL (neither is followed),
    ///   `notRegularFile` when `source` is a directory or special file.
    func copyFile(at source: URL, to destination: URL) throws

    /// Flushes the file at `url` to stable storage (`fsync`).
    ///
    /// - Throws: ``FileSystemError``; an I/O error here means the data may not be on disk.
    func synchronizeFile(at url: URL) throws

    /// Flushes the directory at `url` (its entries: creations, renames, removals) to stable storage.
    ///
    /// - Throws: ``FileSystemError``.
    func synchronizeDirectory(at url: URL) throws

    /// Renames `source` to `destination` atomically, replacing a file (or an empty directory) there.
    ///
    /// - Throws: ``FileSystemError``.
    func rename(_ source: URL, to destination: URL) throws

    /// Gives the file at `source` the further name `destination` (a hard link), atomically and never replacing
    /// anything: publishing a file whole under a name another process may take at the same time. `source` keeps its
    /// name; remove it afterwards.
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is at `destination` (it is left as it is).
    func link(_ source: URL, to destination: URL) throws

    /// Removes the file, link or whole directory tree at `url`, never following a link.
    ///
    /// - Throws: ``FileSystemError``; `notFound` when nothing is there.
    func remove(at url: URL) throws

    /// The time the file system stamps on what is written now, to tell whether a file's recorded modification time
    /// is recent enough that a later write could have left it unchanged. By default the system's clock.
    func currentTime() -> Date
}

extension FileSystem {
    /// The time the file system stamps on what is written now, to tell whether a file's recorded modification time
    /// is recent enough that a later write could have left it unchanged. By default the system's clock.
    public func currentTime() -> Date { Date() }

    /// Reads the whole file, then checks its size: a file system that reads untrusted files should stop at the limit
    /// instead, as ``PosixFileSystem`` does.
    public func contents(of url: URL, limit: Int) throws -> Data {
        let data = try contents(of: url)
        guard data.count <= limit else { throw FileSystemError(.tooLarge, operation: "read", path: url.path) }
        return data
    }

    /// Reads the whole file, then keeps its first `count` bytes: a file system that reads large files should stop at
    /// `count` instead, as ``PosixFileSystem`` does.
    public func leadingBytes(of url: URL, count: Int) throws -> Data {
        Data(try contents(of: url).prefix(max(count, 0)))
    }

    /// Reads the whole file and writes it (``writeFile(_:to:)``): it is held in memory.
    public func copyFile(at source: URL, to destination: URL) throws {
        try writeFile(try contents(of: source), to: destination)
    }

    /// Throws `other(ENOTSUP)`: linking has no safe stand-in made of the other calls (none is atomic and never
    /// replaces), so a file system that cannot link says so.
    public func link(_ source: URL, to destination: URL) throws {
        throw FileSystemError(.other(ENOTSUP), operation: "link (not supported by \(Self.self))", path: source.path)
    }
}
