import FolioCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a ``FileSystem`` call failed: the `errno` of a system call in Folio's terms, located at the file operation
/// (``FileOperation``: the call and the path it was about).
///
/// Its message names the operation, the path and the code's reason: "fsync of '/tmp/a' failed: I/O error".
public typealias FileSystemError = FolioError<FileSystemErrorCode>

/// The kinds of ``FileSystemError``; more kinds may be added.
public struct FileSystemErrorCode: FolioErrorCode {
    private enum Value: Hashable, Sendable {
        case notFound, permissionDenied, readOnly, noSpace, ioError, notDirectory, isDirectory, exists, notEmpty
        case symbolicLink, notRegularFile, crashed
        case other(Int32)
    }
    private let value: Value

    /// Nothing is at the path, or a directory above it is missing (`ENOENT`).
    public static let notFound = Self(value: .notFound)
    /// The process may not do this (`EACCES`, `EPERM`).
    public static let permissionDenied = Self(value: .permissionDenied)
    /// The file system is mounted read-only (`EROFS`).
    public static let readOnly = Self(value: .readOnly)
    /// The disk or the quota is full (`ENOSPC`, `EDQUOT`).
    public static let noSpace = Self(value: .noSpace)
    /// The device failed (`EIO`): after a failed fsync the data may not be on disk.
    public static let ioError = Self(value: .ioError)
    /// A directory was expected (`ENOTDIR`).
    public static let notDirectory = Self(value: .notDirectory)
    /// A file was expected but a directory is there (`EISDIR`).
    public static let isDirectory = Self(value: .isDirectory)
    /// Something is already at the path (`EEXIST`).
    public static let exists = Self(value: .exists)
    /// The directory is not empty (`ENOTEMPTY`).
    public static let notEmpty = Self(value: .notEmpty)
    /// A symbolic link is at the path and was not followed (`ELOOP` with `O_NOFOLLOW`).
    public static let symbolicLink = Self(value: .symbolicLink)
    /// The item is a FIFO, socket, device or directory where a regular file was expected.
    public static let notRegularFile = Self(value: .notRegularFile)
    /// A fault injector (`FaultInjectingFileSystem` in FolioTesting) simulated a crash: this call and every later
    /// one did not happen.
    public static let crashed = Self(value: .crashed)
    /// Any other `errno`.
    public static func other(_ errorNumber: Int32) -> Self { Self(value: .other(errorNumber)) }

    /// The code for an `errno` value.
    public init(errorNumber: Int32) {
        switch errorNumber {
        case ENOENT: value = .notFound
        case EACCES, EPERM: value = .permissionDenied
        case EROFS: value = .readOnly
        case ENOSPC, EDQUOT: value = .noSpace
        case EIO: value = .ioError
        case ENOTDIR: value = .notDirectory
        case EISDIR: value = .isDirectory
        case EEXIST: value = .exists
        case ENOTEMPTY: value = .notEmpty
        case ELOOP: value = .symbolicLink
        default: value = .other(errorNumber)
        }
    }

    private init(value: Value) { self.value = value }

    /// An error is located at the file operation that failed.
    public typealias Location = FileOperation

    /// A short, fixed reason for this code, such as "I/O error".
    public var reason: String {
        switch value {
        case .notFound: "no such file or directory"
        case .permissionDenied: "permission denied"
        case .readOnly: "read-only file system"
        case .noSpace: "no space left on device"
        case .ioError: "I/O error"
        case .notDirectory: "not a directory"
        case .isDirectory: "is a directory"
        case .exists: "file exists"
        case .notEmpty: "directory not empty"
        case .symbolicLink: "is a symbolic link"
        case .notRegularFile: "not a regular file"
        case .crashed: "the device crashed"
        case .other(let number): "error \(number) (\(String(cString: strerror(number))))"
        }
    }

    /// The code's name.
    public var description: String {
        switch value {
        case .notFound: "notFound"
        case .permissionDenied: "permissionDenied"
        case .readOnly: "readOnly"
        case .noSpace: "noSpace"
        case .ioError: "ioError"
        case .notDirectory: "notDirectory"
        case .isDirectory: "isDirectory"
        case .exists: "exists"
        case .notEmpty: "notEmpty"
        case .symbolicLink: "symbolicLink"
        case .notRegularFile: "notRegularFile"
        case .crashed: "crashed"
        case .other(let number): "other(\(number))"
        }
    }
}

extension FileSystemError {
    /// Creates an error whose message is built from the operation, the path and the code's reason: "fsync of
    /// '/tmp/a' failed: I/O error".
    public init(_ code: Code, operation: String, path: String) {
        self.init(
            code, "\(operation) of '\(path)' failed: \(code.reason)",
            location: FileOperation(operation: operation, path: path))
    }

    /// Translates a system call's `errno`.
    init(errorNumber: Int32, operation: String, path: String) {
        self.init(Code(errorNumber: errorNumber), operation: operation, path: path)
    }

    /// The path the call was about.
    public var path: String { location.path }

    /// The call that failed, such as "fsync" or "open for writing".
    public var operation: String { location.operation }
}
