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

/// A validated path inside a file package: relative, `/`-separated, with no empty, `.` or `..` components, no NUL,
/// backslash or control character, so that joining it to the package root can never land outside the root.
///
/// The checks read the UTF-8 bytes and Unicode scalars the file system sees, never Characters: a combining mark
/// after `/` makes one Character of the two (`"../\u{301}x"` is the Characters `.`, `.`, `/́`, `x`), which a check
/// per Character would not see as a separator. For the same reason a component may not start with a mark or joiner
/// that would join the `/` before it, nor end with one that would join the `/` after it, and a component that shows
/// as `.` or `..` (dots with only marks or invisible characters beside them) is refused like `.` and `..`.
public struct PackagePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The path's components, each non-empty.
    public let components: [String]

    /// The longest accepted path, in UTF-8 bytes.
    public static let maximumLength = 1024
    /// The longest accepted component, in UTF-8 bytes (`NAME_MAX` of Linux and most file systems).
    public static let maximumComponentLength = 255

    /// Validates `text`.
    ///
    /// - Throws: ``PackageError`` with code `invalidPath` naming what is wrong.
    public init(_ text: String) throws(PackageError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw PackageError(.invalidPath, "a package entry name is empty") }
        guard bytes.count <= Self.maximumLength else {
            throw PackageError(.invalidPath, "package entry name is longer than \(Self.maximumLength) bytes")
        }
        guard bytes[0] != Self.slash else { throw PackageError(.invalidPath, "package entry '\(text)' is an absolute path") }
        guard !bytes.contains(0) else { throw PackageError(.invalidPath, "package entry name contains a NUL byte") }
        guard !bytes.contains(Self.backslash) else {
            throw PackageError(.invalidPath, "package entry '\(text)' contains a backslash")
        }
        var parts: [String] = []
        for part in bytes.split(separator: Self.slash, omittingEmptySubsequences: false) {
            guard !part.isEmpty else { throw PackageError(.invalidPath, "package entry '\(text)' has an empty component") }
            // Cut at an ASCII byte, each part is valid UTF-8 on its own.
            let component = String(decoding: part, as: UTF8.self)
            try Self.check(component, byteCount: part.count, in: text)
            parts.append(component)
        }
        components = parts
    }

    private static let slash = UInt8(ascii: "/")
    private static let backslash = UInt8(ascii: "\\")

    /// Refuses a component the file system, a terminal or a reader per Character would take for something else.
    private static func check(_ component: String, byteCount: Int, in text: String) throws(PackageError) {
        guard byteCount <= maximumComponentLength else {
            throw PackageError(.invalidPath, "package entry '\(text)' has a component longer than \(maximumComponentLength) bytes")
        }
        if let control = component.unicodeScalars.first(where: isControl) {
            let code = "U+" + String(control.value, radix: 16, uppercase: true).leftPadded(to: 4)
            throw PackageError(.invalidPath, "package entry name contains the control character \(code)")
        }
        guard !looksLikeDots(component) else {
            throw PackageError(.invalidPath, "package entry '\(text)' has a '\(component)' component")
        }
        // Between two separators, the component's first and last Characters must be its own: otherwise a mark at
        // its start (or a prepended one at its end) joins a `/`, and the separator disappears for anyone who reads
        // the path per Character.
        let bounded = "/" + component + "/"
        guard bounded.first == "/" && bounded.last == "/" else {
            throw PackageError(.invalidPath, "package entry '\(text)' has a component that starts or ends with a combining mark or joiner")
        }
    }

    /// C0 and C1 controls and DEL: never part of a name a person reads, and escape sequences to a terminal.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `component` is one or two dots once marks and invisible characters are left out (`..` followed by
    /// U+0301, say), so that it shows as `.` or `..`.
    private static func looksLikeDots(_ component: String) -> Bool {
        var dots = 0
        for scalar in component.unicodeScalars {
            if scalar == "." {
                dots += 1
                if dots > 2 { return false }
                continue
            }
            let properties = scalar.properties
            switch properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .format: continue
            default: if properties.isDefaultIgnorableCodePoint { continue }
            }
            return false
        }
        return dots > 0
    }

    /// The path as text, such as `images/cover.png`.
    public var description: String { components.joined(separator: "/") }

    /// The last component.
    public var name: String { components[components.count - 1] }

    /// The directories above this entry, outermost first (`a`, `a/b` for `a/b/c`).
    public var ancestors: [PackagePath] {
        (1..<components.count).map { count in
            // Prefixes of a valid path are valid.
            try! PackagePath(components[0..<count].joined(separator: "/"))
        }
    }

    /// Orders by components, so a directory's entries sort together.
    public static func < (lhs: PackagePath, rhs: PackagePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }
}

/// A file package as a value (what NSFileWrapper is on Apple platforms): regular files at validated paths, and
/// directories, each file with its content hash.
///
/// Links and special files cannot be represented, so a package read from disk with one is refused.
public struct FilePackage: Hashable, Sendable {
    /// One regular file.
    public struct File: Hashable, Sendable {
        /// The bytes.
        public let contents: Data
        /// SHA-256 of the bytes.
        public let hash: ContentHash

        /// Wraps bytes, hashing them.
        public init(_ contents: Data) {
            self.contents = contents
            hash = ContentHash(hashing: contents)
        }
    }

    /// The files, by path.
    public private(set) var files: [PackagePath: File] = [:]
    /// Directories that exist even when empty (directories above files exist implicitly).
    public private(set) var directories: Set<PackagePath> = []
    /// How many files lie below each implied directory, so that conflicts are found without a scan.
    private var filesBelow: [PackagePath: Int] = [:]

    /// An empty package.
    public init() {}

    /// A package of these files, by path text.
    ///
    /// - Throws: ``PackageError`` when a path is invalid or two paths conflict.
    public init(files: [String: Data]) throws(PackageError) {
        for path in files.keys.sorted() {
            try setFile(files[path]!, at: PackagePath(path))
        }
    }

    /// The file at `path`, if any.
    public subscript(path: PackagePath) -> File? { files[path] }

    /// The file at the path written as text, if the text is valid and a file is there.
    public subscript(path: String) -> File? { (try? PackagePath(path)).flatMap { files[$0] } }

    /// All file paths, in order.
    public var filePaths: [PackagePath] { files.keys.sorted() }

    /// Every directory, explicit or implied by a file below it, in order.
    public var allDirectories: [PackagePath] {
        var result = directories
        for path in files.keys { result.formUnion(path.ancestors) }
        return result.sorted()
    }

    /// The total size of the files' contents.
    public var byteCount: Int { files.values.reduce(0) { $0 + $1.contents.count } }

    /// Puts `contents` at `path`, replacing a file there.
    ///
    /// - Throws: ``PackageError`` `pathConflict` when a directory is at `path` or a file is at one of its ancestors.
    public mutating func setFile(_ contents: Data, at path: PackagePath) throws(PackageError) {
        if directories.contains(path) || filesBelow[path, default: 0] > 0 {
            throw PackageError(.pathConflict, "'\(path)' is a directory in the package, so it cannot be a file")
        }
        if let file = path.ancestors.first(where: { files[$0] != nil }) {
            throw PackageError(.pathConflict, "'\(file)' is a file in the package, so '\(path)' cannot be below it")
        }
        if files.updateValue(File(contents), forKey: path) == nil {
            for ancestor in path.ancestors { filesBelow[ancestor, default: 0] += 1 }
        }
    }

    /// Adds an (empty) directory.
    ///
    /// - Throws: ``PackageError`` `pathConflict` when a file is at `path` or at one of its ancestors.
    public mutating func addDirectory(_ path: PackagePath) throws(PackageError) {
        if let file = ([path] + path.ancestors).first(where: { files[$0] != nil }) {
            throw PackageError(.pathConflict, "'\(file)' is a file in the package, so '\(path)' cannot be a directory")
        }
        directories.insert(path)
    }

    /// Removes the file at `path`; returns whether one was there.
    @discardableResult
    public mutating func removeFile(at path: PackagePath) -> Bool {
        guard files.removeValue(forKey: path) != nil else { return false }
        for ancestor in path.ancestors {
            filesBelow[ancestor, default: 0] -= 1
            if filesBelow[ancestor] == 0 { filesBelow[ancestor] = nil }
        }
        return true
    }

    /// Each file's path and hash, in path order: what a package's manifest records.
    public var manifest: [(path: PackagePath, hash: ContentHash, size: Int)] {
        filePaths.map { ($0, files[$0]!.hash, files[$0]!.contents.count) }
    }
}

extension String {
    /// The text with zeros in front, up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
