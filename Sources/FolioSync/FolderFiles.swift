import FolioFiles
import Foundation

/// The few file calls a shared sync folder needs, made through an injected ``FileSystem``, with its errors translated
/// into ``SyncError`` `io`.
///
/// Files are published whole and never modified: written to a temporary name in the same directory, flushed,
/// then linked to their final name (which fails rather than replaces when the name is taken) and the directory
/// flushed, so a reader sees a complete file or none. Nothing follows a symbolic link.
struct FolderFiles: Sendable {
    /// The prefix of temporary files, which readers ignore.
    static let temporaryPrefix = ".tmp-"
    /// Files larger than this are refused (a batch holds at most a few thousand changes).
    static let sizeLimit = 1 << 30

    /// The file system the folder is on.
    let fileSystem: any FileSystem

    enum Kind { case absent, file, directory, other }

    func kind(_ path: String) throws(SyncError) -> Kind {
        let kind: FileItemKind
        do {
            kind = try fileSystem.itemKind(at: Self.url(path))
        } catch {
            throw Self.failure(error, "examining", path)
        }
        switch kind {
        case .absent: return .absent
        case .file: return .file
        case .directory: return .directory
        case .symbolicLink, .other: return .other
        }
    }

    /// The names in a directory; empty when there is no directory.
    func names(in path: String) throws(SyncError) -> [String] {
        guard try kind(path) == .directory else { return [] }
        do {
            return try fileSystem.contentsOfDirectory(at: Self.url(path))
        } catch {
            throw SyncError(.io, "cannot list the directory \(path)", cause: error)
        }
    }

    /// Creates a directory if it is absent (another process may create it at the same time), flushing its parent.
    func ensureDirectory(_ path: String) throws(SyncError) {
        switch try kind(path) {
        case .directory: return
        case .absent: break
        case .file, .other: throw SyncError(.io, "\(path) should be a directory but is something else")
        }
        do {
            try fileSystem.createDirectory(at: Self.url(path))
        } catch let error as FileSystemError where error.code == .exists {
            guard try kind(path) == .directory else { throw Self.failure(error, "creating the directory", path) }
            return
        } catch {
            throw Self.failure(error, "creating the directory", path)
        }
        try synchronizeDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The size of the file at `path`.
    func size(of path: String) throws(SyncError) -> Int {
        do {
            return Int(try fileSystem.attributes(at: Self.url(path)).size)
        } catch {
            throw Self.failure(error, "examining", path)
        }
    }

    /// The whole contents of the regular file at `path`, at most ``sizeLimit`` bytes.
    func contents(of path: String) throws(SyncError) -> [UInt8] {
        do {
            return Array(try fileSystem.contents(of: Self.url(path), limit: Self.sizeLimit))
        } catch let error as FileSystemError where error.code == .tooLarge {
            throw SyncError(.io, "\(path) holds more than the limit of \(Self.sizeLimit) bytes")
        } catch {
            throw Self.failure(error, "reading", path)
        }
    }

    /// Publishes `bytes` as the new file `name` in `directory`: temporary file, fsync, link, fsync of the directory.
    /// When a step fails, the temporary file is removed and the name is left as it was.
    ///
    /// - Parameter keep: whether an existing file of that name (its path) is to be kept; one that is not is replaced.
    /// - Returns: `false` when a file of that name already exists and is kept.
    func publish(
        _ bytes: [UInt8], as name: String, in directory: String, temporaryName: String,
        keepingExisting keep: (String) -> Bool = { _ in true }
    ) throws(SyncError) -> Bool {
        let temporary = Self.url(directory + "/" + Self.temporaryPrefix + temporaryName)
        let final = directory + "/" + name
        defer { try? fileSystem.remove(at: temporary) }
        do {
            try fileSystem.writeFile(Data(bytes), to: temporary)
        } catch {
            throw Self.failure(error, "writing", temporary.path)
        }
        do {
            try fileSystem.synchronizeFile(at: temporary)
        } catch {
            throw Self.failure(error, "flushing", temporary.path)
        }
        // link, not rename: it never replaces a file another process published under the same name.
        do {
            try fileSystem.link(temporary, to: Self.url(final))
        } catch let error as FileSystemError where error.code == .exists {
            if keep(final) { return false }
            // What holds the name is not to be kept (a file someone else made in this writer's name): replaced.
            do {
                try fileSystem.rename(temporary, to: Self.url(final))
            } catch {
                throw Self.failure(error, "replacing", final)
            }
        } catch {
            throw Self.failure(error, "publishing", final)
        }
        try synchronizeDirectory(directory)
        return true
    }

    func synchronizeDirectory(_ path: String) throws(SyncError) {
        do {
            try fileSystem.synchronizeDirectory(at: Self.url(path))
        } catch {
            throw Self.failure(error, "flushing the directory", path)
        }
    }

    /// The URL of `path`, made without looking at the disk.
    private static func url(_ path: String) -> URL {
        URL(fileURLWithPath: path, isDirectory: false)
    }

    /// A ``FileSystemError``, or any other error a custom file system throws, as `io`, kept as the cause.
    private static func failure(_ error: any Error, _ operation: String, _ path: String) -> SyncError {
        let reason = (error as? FileSystemError)?.code.reason ?? "\(error)"
        return SyncError(.io, "\(operation) \(path) failed: \(reason)", cause: error)
    }
}
