import FolioCore
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's data directory on disk: its layout, who may read it, and the lock that keeps one server on it.
///
/// Layout:
/// - `accounts.sqlite`: accounts, libraries, token hashes, device bindings (``AccountStore``).
/// - `libraries/FILE.sqlite`: one log per library, named by ``libraryFileName(_:)`` so that no two libraries share
///   a file on any file system (a case-insensitive one included).
/// - `lock`: held by the running server (``SyncServer``), with its process id; it stays after the server stops.
///
/// The directory and `libraries/` are created readable by their owner only (mode 0700), and the databases are
/// made 0600 whenever they are opened: they hold token hashes, every document of every library and the server's
/// keys. An existing directory keeps its mode (see ``isOpenToOthers``).
public struct ServerDataDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// The data directory at `url` (nothing is created yet).
    public init(_ url: URL) {
        self.url = url
    }

    /// The directory of the libraries' logs.
    var libraries: URL { url.appendingPathComponent("libraries", isDirectory: true) }

    /// Creates the directory and `libraries/` where missing, with mode 0700 (their parents as `mkdir -p` would).
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func create() throws {
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.makePrivateDirectory(url)
            try Self.makePrivateDirectory(libraries)
        } catch {
            throw ServerError(.storage, "cannot create the data directory \(url.path)", cause: error)
        }
    }

    /// Whether group or others have any access to the directory (its mode is not 0700 or stricter): its files are
    /// 0600, but an operator's directory should not be open to others either. The server warns when it is.
    public var isOpenToOthers: Bool {
        mode.map { $0 & 0o077 != 0 } ?? false
    }

    /// The directory's permission bits, nil when it cannot be read.
    var mode: Int? {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return nil }
        return Int(status.st_mode) & 0o7777
    }

    /// Creates the directory where missing and opens its account database (made 0600). The token commands use this,
    /// and take no lock: they may run beside a server.
    ///
    /// - Throws: ``ServerError`` `storage`.
    public func openAccounts() throws -> AccountStore {
        try create()
        let file = url.appendingPathComponent("accounts.sqlite")
        let accounts = try AccountStore(at: file)
        try Self.makePrivate(databaseAt: file)
        return accounts
    }

    /// The name of library `name`'s file in `libraries/`: the name in lower case, `~`, the positions of its upper
    /// case letters as a hexadecimal bit mask (bit i for the i-th character), and `.sqlite`: `notes~0.sqlite`,
    /// `Notes` → `notes~1.sqlite`, `ALPHA` → `alpha~1f.sqlite`. The exact name can be read back from it, so two
    /// libraries never share a file, and no two files differ only in case. `~` is not in any library's name, so
    /// a file of the earlier layout (`NAME.sqlite`) is never taken for one of this one.
    public static func libraryFileName(_ name: String) -> String {
        let bytes = Array(name.utf8)
        var digits: [UInt8] = []
        for start in stride(from: 0, to: bytes.count, by: 4) {
            var digit = 0
            for offset in 0..<4 where start + offset < bytes.count {
                let byte = bytes[start + offset]
                if byte >= 0x41 && byte <= 0x5A { digit |= 1 << offset }
            }
            digits.append(Array("0123456789abcdef".utf8)[digit])
        }
        while digits.count > 1 && digits.last == 0x30 { digits.removeLast() }
        let mask = digits.isEmpty ? "0" : String(decoding: digits.reversed(), as: UTF8.self)
        return name.lowercased() + "~" + mask + ".sqlite"
    }

    /// The suffixes of a SQLite database's companion files.
    static let companions = ["-wal", "-shm", "-journal"]

    /// The file of library `name`. A file of the earlier layout (`libraries/NAME.sqlite`, found under exactly that
    /// name, with its `-wal`, `-shm` and `-journal`) is first renamed to it: the companions first and the database
    /// last, so that a crash between two renames is finished at the next open, and nothing is ever copied.
    ///
    /// - Throws: ``ServerError`` `storage` when a rename fails.
    func libraryFile(_ name: String, logger: Logger) throws -> URL {
        let fileName = Self.libraryFileName(name)
        let file = libraries.appendingPathComponent(fileName)
        guard !FileManager.default.fileExists(atPath: file.path) else { return file }
        let old = name + ".sqlite"
        // Exactly that name, as the directory lists it: on a case-insensitive file system, `ALPHA.sqlite` would
        // otherwise open `alpha.sqlite`, which is another library's.
        let present = Set((try? FileManager.default.contentsOfDirectory(atPath: libraries.path)) ?? [])
        guard present.contains(old) else { return file }
        for suffix in Self.companions + [""] where present.contains(old + suffix) {
            let from = libraries.appendingPathComponent(old + suffix).path
            let to = libraries.appendingPathComponent(fileName + suffix).path
            guard rename(from, to) == 0 else {
                let cause = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                throw ServerError(.storage, "cannot move the library file \(from) to \(to)", cause: cause)
            }
        }
        Self.synchronize(directory: libraries)
        logger.notice(
            "moved a library's file to its new name",
            metadata: ["library": .string(name), "from": .string(old), "to": .string(fileName)])
        return file
    }

    /// Makes the database at `file` and its companions readable and writable by their owner only (0600). SQLite gives
    /// companions made later the database's mode.
    static func makePrivate(databaseAt file: URL) throws {
        for suffix in [""] + companions {
            let path = file.path + suffix
            if chmod(path, 0o600) != 0 && !(errno == ENOENT && !suffix.isEmpty) {
                let cause = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                throw ServerError(.storage, "cannot make \(path) readable by its owner only", cause: cause)
            }
        }
    }

    /// Creates `directory` with mode 0700 unless it exists.
    private static func makePrivateDirectory(_ directory: URL) throws {
        guard mkdir(directory.path, 0o700) != 0 else { return }
        let failure = errno
        var isDirectory: ObjCBool = false
        if failure == EEXIST && FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
        {
            return
        }
        throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
    }

    /// Makes the renames in `directory` durable (best effort: a rename that is lost is done again at the next open).
    private static func synchronize(directory: URL) {
        let descriptor = open(directory.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Takes the data directory's lock (`lock`, an exclusive `flock` held until the returned lock is released) and
    /// writes this process's id in it.
    ///
    /// - Throws: ``ServerError`` `startup` when another process holds it, naming the directory and that process's
    ///   id; `storage` when the file cannot be opened.
    func lock() throws -> DataDirectoryLock {
        let path = url.appendingPathComponent("lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let cause = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            throw ServerError(.storage, "cannot open the lock file \(path)", cause: cause)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            close(descriptor)
            guard failure == EWOULDBLOCK || failure == EAGAIN else {
                let cause = POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
                throw ServerError(.storage, "cannot lock \(path)", cause: cause)
            }
            let holder = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let who = Int32(holder).map { "another server (pid \($0))" } ?? "another server"
            throw ServerError(
                .startup,
                "the data directory \(url.path) is in use by \(who); one server at a time may use a data directory")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return DataDirectoryLock(descriptor: descriptor)
    }
}

/// A data directory's lock, held until released (its file descriptor closed).
final class DataDirectoryLock: Sendable {
    private let descriptor: Int32

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
