/// Why a save, a read or a recovery of a document's file or package failed.
///
/// File-system failures are translated at the pipeline's boundary: the code says what it means for the document
/// (`syncFailed`: the bytes may not be on disk; `noSpace`; `permissionDenied`…), the message names the step and the
/// path, and the ``FileSystemError`` is kept as the ``cause``. A document whose save failed enters `.savingError` and
/// is rewritten from its log at the next save (`incremental: false`), never retried blindly.
public struct SaveError: Error, CustomStringConvertible, Sendable {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case writeFailed, syncFailed, renameFailed, readFailed, noSpace, permissionDenied, notFound
            case corruptPackage, unsafePackage, crashed
        }
        private let value: Value

        /// Creating, writing or removing a file or directory failed.
        public static let writeFailed = Code(value: .writeFailed)
        /// An fsync failed: what was written may not be on disk, so the save failed.
        public static let syncFailed = Code(value: .syncFailed)
        /// The atomic rename that publishes a file or a manifest failed.
        public static let renameFailed = Code(value: .renameFailed)
        /// Reading the file or the package failed.
        public static let readFailed = Code(value: .readFailed)
        /// The disk or the quota is full.
        public static let noSpace = Code(value: .noSpace)
        /// The directory is read-only or not writable by this process.
        public static let permissionDenied = Code(value: .permissionDenied)
        /// There is no file or package at the URL.
        public static let notFound = Code(value: .notFound)
        /// The package on disk does not match its manifest, or the manifest cannot be read, and it cannot be
        /// recovered.
        public static let corruptPackage = Code(value: .corruptPackage)
        /// The package holds a symbolic link, a special file or a hostile entry name (`..`, an absolute path), or a
        /// path would land outside its root. Nothing was written.
        public static let unsafePackage = Code(value: .unsafePackage)
        /// The (simulated) device crashed in the middle of the operation.
        public static let crashed = Code(value: .crashed)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What went wrong, as one sentence: "could not save Notes.txt: fsync of the temporary file failed: I/O error".
    public var message: String
    /// The underlying error (a ``FileSystemError``, a `PackageError`), when there is one.
    public var cause: (any Error & Sendable)?
    /// Where the error was raised.
    public var file: String
    /// Where the error was raised.
    public var line: Int

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.line = line
    }

    /// The message (it already carries the cause's reason).
    public var description: String { message }
}

extension SaveError {
    /// Translates a file-system failure during `step` ("fsync of the temporary file") of `action` ("save Notes.txt").
    ///
    /// The file-system code wins where it says more than the step (full disk, permissions, a crash); otherwise the
    /// step's own code applies.
    init(_ error: FileSystemError, action: String, step: String, stepCode: Code, file: String = #fileID, line: Int = #line) {
        let code: Code
        switch error.code {
        case .noSpace: code = .noSpace
        case .permissionDenied, .readOnly: code = .permissionDenied
        case .crashed: code = .crashed
        case .symbolicLink, .notRegularFile: code = .unsafePackage
        default: code = stepCode
        }
        self.init(code, "could not \(action): \(step) failed: \(error.code.reason)", cause: error, file: file, line: line)
    }
}
