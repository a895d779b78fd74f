import FolioCore

/// Why a save, a read or a recovery of a document's file or package failed.
///
/// File-system failures are translated at the pipeline's boundary: the code says what it means for the document
/// (`syncFailed`: the bytes may not be on disk; `noSpace`; `permissionDenied`…), the message names the step and the
/// path, and the `FileSystemError` is kept as the `cause`. A document whose save failed enters `.savingError` and
/// is rewritten from its log at the next save (`incremental: false`), never retried blindly.
public typealias SaveError = FolioError<SaveErrorCode>

/// The kinds of ``SaveError``; more kinds may be added.
public struct SaveErrorCode: FolioErrorCode {
    /// Creating, writing or removing a file or directory failed.
    public static let writeFailed = Self(description: "writeFailed")
    /// An fsync failed: what was written may not be on disk, so the save failed.
    public static let syncFailed = Self(description: "syncFailed")
    /// The atomic rename that publishes a file or a manifest failed.
    public static let renameFailed = Self(description: "renameFailed")
    /// Reading the file or the package failed.
    public static let readFailed = Self(description: "readFailed")
    /// The disk or the quota is full.
    public static let noSpace = Self(description: "noSpace")
    /// The directory is read-only or not writable by this process.
    public static let permissionDenied = Self(description: "permissionDenied")
    /// There is no file or package at the URL.
    public static let notFound = Self(description: "notFound")
    /// The package on disk does not match its manifest, or the manifest cannot be read, and it cannot be
    /// recovered.
    public static let corruptPackage = Self(description: "corruptPackage")
    /// The package holds a symbolic link, a special file or a hostile entry name (`..`, an absolute path), or a
    /// path would land outside its root. Nothing was written.
    public static let unsafePackage = Self(description: "unsafePackage")
    /// The (simulated) device crashed in the middle of the operation.
    public static let crashed = Self(description: "crashed")

    /// The code's name.
    public let description: String

    /// The message alone: it already carries the reason of its cause.
    public static func describe(_ error: SaveError) -> String { error.message }
}

extension SaveError {
    /// Translates a file-system failure during `step` ("fsync of the temporary file") of `action` ("save Notes.txt").
    ///
    /// The file-system code wins where it says more than the step (full disk, permissions, a crash); otherwise the
    /// step's own code applies. An error that is not a `FileSystemError` (from a custom file system) takes the
    /// step's code and is kept as the cause.
    init(_ error: any Error, action: String, step: String, stepCode: Code, file: String = #fileID, line: Int = #line) {
        guard let error = error as? FileSystemError else {
            self.init(stepCode, "could not \(action): \(step) failed: \(error)", cause: error, file: file, line: line)
            return
        }
        let code: Code
        switch error.code {
        case .noSpace: code = .noSpace
        case .permissionDenied, .readOnly: code = .permissionDenied
        case .crashed: code = .crashed
        case .symbolicLink, .notRegularFile: code = .unsafePackage
        default: code = stepCode
        }
        self.init(
            code, "could not \(action): \(step) failed: \(error.code.reason)", cause: error, file: file, line: line)
    }
}
