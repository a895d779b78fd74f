/// Why a package entry name or a package was refused.
public typealias PackageError = FolioError<PackageErrorCode>

/// The kinds of ``PackageError``; more kinds may be added.
public struct PackageErrorCode: FolioErrorCode {
    /// The entry name is empty, absolute, has `..`, `.` or empty components, a NUL, a backslash or a control
    /// character, or a component that a mark joins to a `/` or makes look like `.` or `..`.
    public static let invalidPath = Self(description: "invalidPath")
    /// The entry on disk is a link or a special file, not a regular file or directory.
    public static let notRegularFile = Self(description: "notRegularFile")
    /// The package exceeds the size or entry limits.
    public static let tooLarge = Self(description: "tooLarge")
    /// A file would sit where a directory is, or below a file.
    public static let pathConflict = Self(description: "pathConflict")

    /// The code's name.
    public let description: String
}
