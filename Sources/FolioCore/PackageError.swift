import Foundation

/// Why a package entry name or a package was refused.
public struct PackageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem; more kinds may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidPath, notRegularFile, tooLarge, pathConflict
        }
        private let value: Value
        /// The entry name is empty, absolute, has `..`, `.` or empty components, a NUL, a backslash or a control
        /// character, or a component that a mark joins to a `/` or makes look like `.` or `..`.
        public static let invalidPath = Code(value: .invalidPath)
        /// The entry on disk is a link or a special file, not a regular file or directory.
        public static let notRegularFile = Code(value: .notRegularFile)
        /// The package exceeds the size or entry limits.
        public static let tooLarge = Code(value: .tooLarge)
        /// A file would sit where a directory is, or below a file.
        public static let pathConflict = Code(value: .pathConflict)
        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What was wrong, as one sentence.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
