import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX calls a shared sync folder needs, with `errno` translated into ``SyncError`` `io`.
///
/// Files are published whole and never modified: written to a temporary name in the same directory, flushed,
/// then linked to their final name (which fails rather than replaces when the name is taken) and the directory
/// flushed, so a reader sees a complete file or none. Nothing follows a symbolic link.
enum FolderFiles {
    /// The prefix of temporary files, which readers ignore.
    static let temporaryPrefix = ".tmp-"
    /// Files larger than this are refused (a batch holds at most a few thousand changes).
    static let sizeLimit = 1 << 30

    enum Kind { case absent, file, directory, other }

    static func kind(_ path: String) throws(SyncError) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let number = errno
            if number == ENOENT || number == ENOTDIR { return .absent }
            throw failure(number, "examining", path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The names in a directory, sorted; empty when there is no directory.
    static func names(in path: String) throws(SyncError) -> [String] {
        guard try kind(path) == .directory else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        } catch {
            throw SyncError(.io, "cannot list the directory \(path)", cause: error)
        }
    }

    /// Creates a directory if it is absent (another process may create it at the same time), flushing its parent.
    static func ensureDirectory(_ path: String) throws(SyncError) {
        switch try kind(path) {
        case .directory: return
        case .absent: break
        case .file, .other: throw SyncError(.io, "\(path) should be a directory but is something else")
        }
        if mkdir(path, 0o755) != 0 {
            let number = errno
            guard number == EEXIST, try kind(path) == .directory else { throw failure(number, "creating the directory", path) }
            return
        }
        try synchronizeDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The whole contents of the regular file at `path`.
    static func contents(of path: String) throws(SyncError) -> [UInt8] {
        let descriptor = try openFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, "opening")
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(errno, "examining", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw SyncError(.io, "\(path) is not a regular file") }
        guard Int(info.st_size) <= sizeLimit else {
            throw SyncError(.io, "\(path) has \(info.st_size) bytes, more than the limit of \(sizeLimit)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno, "reading", path)
            }
            bytes.append(contentsOf: chunk[..<count])
            guard bytes.count <= sizeLimit else { throw SyncError(.io, "\(path) grew beyond the limit of \(sizeLimit) bytes") }
        }
        return bytes
    }

    /// Publishes `bytes` as the new file `name` in `directory`: temporary file, fsync, link, fsync of the directory.
    ///
    /// - Parameter keep: whether an existing file of that name (its path) is to be kept; one that is not is replaced.
    /// - Returns: `false` when a file of that name already exists and is kept.
    static func publish(
        _ bytes: [UInt8], as name: String, in directory: String, temporaryName: String,
        keepingExisting keep: (String) -> Bool = { _ in true }
    ) throws(SyncError) -> Bool {
        let temporary = directory + "/" + temporaryPrefix + temporaryName
        let final = directory + "/" + name
        let descriptor = try openFile(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, "creating", mode: 0o644)
        defer { unlink(temporary) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                let number = errno
                close(descriptor)
                throw failure(number, "writing", temporary)
            }
            offset += count
        }
        while fsync(descriptor) != 0 {
            if errno == EINTR { continue }
            let number = errno
            close(descriptor)
            throw failure(number, "flushing", temporary)
        }
        guard close(descriptor) == 0 else { throw failure(errno, "closing", temporary) }
        // link, not rename: it never replaces a file another process published under the same name.
        if link(temporary, final) != 0 {
            let number = errno
            guard number == EEXIST else { throw failure(number, "publishing", final) }
            if keep(final) { return false }
            // What holds the name is not to be kept (a file someone else made in this writer's name): replaced.
            guard rename(temporary, final) == 0 else { throw failure(errno, "replacing", final) }
        }
        try synchronizeDirectory(directory)
        return true
    }

    static func synchronizeDirectory(_ path: String) throws(SyncError) {
        let descriptor = try openFile(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, "opening the directory")
        defer { close(descriptor) }
        while fsync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw failure(errno, "flushing the directory", path)
        }
    }

    private static func openFile(_ path: String, _ flags: Int32, _ operation: String, mode: mode_t = 0) throws(SyncError) -> Int32 {
        while true {
            let descriptor = open(path, flags, mode)
            if descriptor >= 0 { return descriptor }
            if errno == EINTR { continue }
            throw failure(errno, operation, path)
        }
    }

    private static func failure(_ number: Int32, _ operation: String, _ path: String) -> SyncError {
        SyncError(.io, "\(operation) \(path) failed: \(String(cString: strerror(number))) (errno \(number))")
    }
}
