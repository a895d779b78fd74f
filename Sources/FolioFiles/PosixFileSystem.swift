import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The real ``FileSystem``: POSIX calls (`open`, `write`, `fsync`, `rename`, `lstat`, `unlinkat`…) with `errno`
/// translated into ``FileSystemError``.
///
/// No call follows a symbolic link: reads and writes open with `O_NOFOLLOW`, directories are listed and removed
/// through descriptors opened with `O_NOFOLLOW`, and kinds come from `lstat`.
public struct PosixFileSystem: FileSystem {
    /// Whether ``synchronizeFile(at:)`` and ``synchronizeDirectory(at:)`` call `fsync`.
    public let synchronizes: Bool

    /// The real file system.
    ///
    /// - Parameter synchronizes: `false` makes the two synchronize calls return at once: what was written still
    ///   survives a process crash (the operating system holds it), not a power loss. For scratch directories and
    ///   simulations of process crashes, where an `fsync` costs time and proves nothing.
    public init(synchronizes: Bool = true) {
        self.synchronizes = synchronizes
    }

    /// What is at `url`, without following a symbolic link there (`lstat`).
    ///
    /// - Throws: ``FileSystemError`` when the item cannot be examined (an absent item is not an error).
    public func itemKind(at url: URL) throws -> FileItemKind {
        let path = Self.path(of: url)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let number = errno
            // ENOTDIR: a component above is a file, so nothing can be at the path.
            if number == ENOENT || number == ENOTDIR { return .absent }
            throw FileSystemError(errorNumber: number, operation: "lstat", path: path)
        }
        return Self.kind(of: info.st_mode)
    }

    /// The kind, size and modification time of the item at `url`, without following a symbolic link there.
    ///
    /// - Throws: ``FileSystemError``, `notFound` when nothing is there.
    public func attributes(at url: URL) throws -> FileAttributes {
        let path = Self.path(of: url)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "lstat", path: path)
        }
        let seconds = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1_000_000_000
        return FileAttributes(
            kind: Self.kind(of: info.st_mode), size: Int(info.st_size),
            modificationDate: Date(timeIntervalSince1970: seconds), fileNumber: UInt64(info.st_ino))
    }

    /// The whole contents of the regular file at `url`.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` for a link and `notRegularFile` for a directory, FIFO or
    ///   device, which are never opened for reading.
    public func contents(of url: URL) throws -> Data {
        try contents(of: url, limit: Int.max)
    }

    /// The whole contents of the regular file at `url`, which must not hold more than `limit` bytes: for files
    /// anyone could have put there. No more than `limit + 1` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``, and ``FileSystemErrorCode/tooLarge`` when the file holds
    ///   more than `limit` bytes.
    public func contents(of url: URL, limit: Int) throws -> Data {
        let path = Self.path(of: url)
        let descriptor = try Self.openRegularFile(path)
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "fstat", path: path)
        }
        guard Int(info.st_size) <= limit else { throw FileSystemError(.tooLarge, operation: "read", path: path) }
        var result = Data()
        result.reserveCapacity(max(Int(info.st_size), 0))
        try Self.readChunks(descriptor, path: path) { chunk throws(FileSystemError) in
            result.append(chunk.assumingMemoryBound(to: UInt8.self))
            // The file may grow while it is read.
            guard result.count <= limit else { throw FileSystemError(.tooLarge, operation: "read", path: path) }
        }
        return result
    }

    /// The first `count` bytes of the regular file at `url`, or all of them when it holds fewer: for a header. No
    /// more than `count` bytes are read, however large the file is.
    ///
    /// - Throws: ``FileSystemError`` as ``contents(of:)``.
    public func leadingBytes(of url: URL, count: Int) throws -> Data {
        let path = Self.path(of: url)
        let descriptor = try Self.openRegularFile(path)
        defer { close(descriptor) }
        let wanted = max(count, 0)
        guard wanted > 0 else { return Data() }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: wanted, alignment: 1)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < wanted {
            let got = read(descriptor, buffer + filled, wanted - filled)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(errorNumber: errno, operation: "read", path: path)
            }
            filled += got
        }
        return Data(bytes: buffer, count: filled)
    }

    /// The names in the directory at `url`, without `.` and `..`, sorted by their UTF-8 bytes.
    ///
    /// - Throws: ``FileSystemError``; `notDirectory` when `url` is not a directory.
    public func contentsOfDirectory(at url: URL) throws -> [String] {
        let path = Self.path(of: url)
        let names = try Self.rawNames(inDirectoryAt: AT_FDCWD, name: Array(path.utf8CString), displayPath: path)
        var result: [String] = []
        result.reserveCapacity(names.count)
        for raw in names {
            guard let name = raw.withUnsafeBufferPointer({ String(validatingCString: $0.baseAddress!) }) else {
                throw FileSystemError(.other(EILSEQ), operation: "list (a name is not valid UTF-8)", path: path)
            }
            result.append(name)
        }
        return result.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Creates one directory (its parent must exist).
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is already there.
    public func createDirectory(at url: URL) throws {
        let path = Self.path(of: url)
        guard mkdir(path, 0o755) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "mkdir", path: path)
        }
    }

    /// Creates or truncates the regular file at `url` and writes all of `data` to it; does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at `url` (it is not followed).
    public func writeFile(_ data: Data, to url: URL) throws {
        let path = Self.path(of: url)
        let descriptor = try Self.openDescriptor(
            path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
            operation: "open for writing", mode: 0o644)
        do {
            try data.withUnsafeBytes { buffer in try Self.writeAll(buffer, to: descriptor, path: path) }
        } catch {
            close(descriptor)
            throw error
        }
        try Self.closeWritten(descriptor, path: path)
    }

    /// Creates or truncates the regular file at `destination` and copies into it the contents of the regular file at
    /// `source`, a piece at a time (a large file is never held in memory); does not sync.
    ///
    /// - Throws: ``FileSystemError``; `symbolicLink` when a link is at either URL (neither is followed),
    ///   `notRegularFile` when `source` is a directory or special file.
    public func copyFile(at source: URL, to destination: URL) throws {
        let from = Self.path(of: source)
        let to = Self.path(of: destination)
        let input = try Self.openRegularFile(from)
        defer { close(input) }
        let output = try Self.openDescriptor(
            to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
            operation: "open for writing", mode: 0o644)
        do {
            try Self.readChunks(input, path: from) { chunk throws(FileSystemError) in
                try Self.writeAll(chunk, to: output, path: to)
            }
        } catch {
            close(output)
            throw error
        }
        try Self.closeWritten(output, path: to)
    }

    /// Flushes the file at `url` to stable storage (`fsync`).
    ///
    /// - Throws: ``FileSystemError``; an I/O error here means the data may not be on disk.
    public func synchronizeFile(at url: URL) throws {
        try synchronize(at: url, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, opening: "open for fsync")
    }

    /// Flushes the directory at `url` (its entries: creations, renames, removals) to stable storage.
    ///
    /// - Throws: ``FileSystemError``.
    public func synchronizeDirectory(at url: URL) throws {
        try synchronize(at: url, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, opening: "open directory for fsync")
    }

    /// Opens the item at `url` with `flags` (the call named `operation`) and flushes it to stable storage, unless
    /// this file system does not synchronize.
    private func synchronize(at url: URL, _ flags: Int32, opening operation: String) throws(FileSystemError) {
        guard synchronizes else { return }
        let path = Self.path(of: url)
        let descriptor = try Self.openDescriptor(path, flags, operation: operation)
        defer { close(descriptor) }
        try Self.synchronize(descriptor, path: path)
    }

    /// Renames `source` to `destination` atomically, replacing a file (or an empty directory) there.
    ///
    /// - Throws: ``FileSystemError``.
    public func rename(_ source: URL, to destination: URL) throws {
        let from = Self.path(of: source)
        let to = Self.path(of: destination)
        guard renameat(AT_FDCWD, from, AT_FDCWD, to) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "rename to '\(to)'", path: from)
        }
    }

    /// Gives the file at `source` the further name `destination` (a hard link), atomically and never replacing
    /// anything: publishing a file whole under a name another process may take at the same time. `source` keeps its
    /// name; remove it afterwards.
    ///
    /// - Throws: ``FileSystemError``; `exists` when something is at `destination` (it is left as it is).
    public func link(_ source: URL, to destination: URL) throws {
        let from = Self.path(of: source)
        let to = Self.path(of: destination)
        // No AT_SYMLINK_FOLLOW: a link at `source` is linked itself, never what it points to.
        guard linkat(AT_FDCWD, from, AT_FDCWD, to, 0) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "link to '\(to)'", path: from)
        }
    }

    /// Removes the file, link or whole directory tree at `url`, never following a link.
    ///
    /// - Throws: ``FileSystemError``; `notFound` when nothing is there.
    public func remove(at url: URL) throws {
        let path = Self.path(of: url)
        try Self.removeEntry(in: AT_FDCWD, name: Array(path.utf8CString), displayPath: path)
    }

    // MARK: - Helpers

    /// The file-system path of a file URL, without a trailing slash (which would make `lstat` follow a link): the
    /// path every call of this file system uses, and error messages name.
    public static func path(of url: URL) -> String {
        var path = url.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func kind(of mode: mode_t) -> FileItemKind {
        switch mode & S_IFMT {
        case S_IFREG: .file
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        default: .other
        }
    }

    private static func openDescriptor(_ path: String, _ flags: Int32, operation: String, mode: mode_t = 0)
        throws(FileSystemError) -> Int32
    {
        while true {
            let descriptor = open(path, flags, mode)
            if descriptor >= 0 { return descriptor }
            if errno == EINTR { continue }
            throw FileSystemError(errorNumber: errno, operation: operation, path: path)
        }
    }

    /// Opens the regular file at `path` for reading, without following a link, and without blocking on a FIFO
    /// planted where a file was expected.
    private static func openRegularFile(_ path: String) throws(FileSystemError) -> Int32 {
        let descriptor = try openDescriptor(
            path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, operation: "open for reading")
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let number = errno
            close(descriptor)
            throw FileSystemError(errorNumber: number, operation: "fstat", path: path)
        }
        guard kind(of: info.st_mode) == .file else {
            close(descriptor)
            throw FileSystemError(.notRegularFile, operation: "read", path: path)
        }
        return descriptor
    }

    /// Reads `descriptor` (open on `path`) to its end a piece at a time, handing each piece to `body`; a read that
    /// a signal interrupted is retried.
    private static func readChunks(
        _ descriptor: Int32, path: String, _ body: (UnsafeRawBufferPointer) throws(FileSystemError) -> Void
    ) throws(FileSystemError) {
        let chunkSize = 1 << 16
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: chunkSize, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = read(descriptor, chunk, chunkSize)
            if count == 0 { return }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(errorNumber: errno, operation: "read", path: path)
            }
            try body(UnsafeRawBufferPointer(start: chunk, count: count))
        }
    }

    /// Writes all of `bytes` to `descriptor` (open on `path`); a write that a signal interrupted is retried.
    private static func writeAll(
        _ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String
    ) throws(FileSystemError) {
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(errorNumber: errno, operation: "write", path: path)
            }
            offset += count
        }
    }

    /// Closes a descriptor that was written to: close can report a deferred write error (NFS, quotas).
    private static func closeWritten(_ descriptor: Int32, path: String) throws(FileSystemError) {
        guard close(descriptor) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "close", path: path)
        }
    }

    private static func synchronize(_ descriptor: Int32, path: String) throws(FileSystemError) {
        while fsync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw FileSystemError(errorNumber: errno, operation: "fsync", path: path)
        }
    }

    /// The raw (NUL-terminated) names in a directory opened without following a link, excluding `.` and `..`.
    private static func rawNames(inDirectoryAt parent: Int32, name: [CChar], displayPath: String)
        throws(FileSystemError) -> [[CChar]]
    {
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FileSystemError(errorNumber: errno, operation: "open directory", path: displayPath)
        }
        guard let stream = fdopendir(descriptor) else {
            let number = errno
            close(descriptor)
            throw FileSystemError(errorNumber: number, operation: "open directory", path: displayPath)
        }
        defer { closedir(stream) }
        var names: [[CChar]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw FileSystemError(errorNumber: errno, operation: "readdir", path: displayPath) }
                break
            }
            let raw: [CChar] = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                let characters = bytes.bindMemory(to: CChar.self)
                let length = characters.firstIndex(of: 0) ?? characters.count
                return Array(characters[..<length]) + [0]
            }
            if raw == [46, 0] || raw == [46, 46, 0] { continue }  // "." and ".."
            names.append(raw)
        }
        return names
    }

    /// Removes `name` inside the directory `parent`, descending into directories through descriptors so that a
    /// link inside the tree is removed, never followed.
    private static func removeEntry(in parent: Int32, name: [CChar], displayPath: String) throws(FileSystemError) {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "lstat", path: displayPath)
        }
        guard kind(of: info.st_mode) == .directory else {
            guard unlinkat(parent, name, 0) == 0 else {
                throw FileSystemError(errorNumber: errno, operation: "unlink", path: displayPath)
            }
            return
        }
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FileSystemError(errorNumber: errno, operation: "open directory", path: displayPath)
        }
        defer { close(descriptor) }
        let children = try rawNames(inDirectoryAt: descriptor, name: [46, 0], displayPath: displayPath)
        for child in children {
            let childName = String(decoding: child.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            try removeEntry(in: descriptor, name: child, displayPath: displayPath + "/" + childName)
        }
        guard unlinkat(parent, name, AT_REMOVEDIR) == 0 else {
            throw FileSystemError(errorNumber: errno, operation: "rmdir", path: displayPath)
        }
    }
}
