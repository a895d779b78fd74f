import Foundation

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
    public init(files: [String: Data]) throws {
        for path in files.keys.sorted() {
            try placeFile(files[path]!, at: PackagePath(checking: path))
        }
    }

    /// The file at `path`, if any.
    public subscript(path: PackagePath) -> File? { files[path] }

    /// The file at the path written as text, if the text is valid and a file is there.
    public subscript(path: String) -> File? { (try? PackagePath(checking: path)).flatMap { files[$0] } }

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
    public mutating func setFile(_ contents: Data, at path: PackagePath) throws {
        try placeFile(contents, at: path)
    }

    /// The typed core of ``setFile(_:at:)``, for the package's own code.
    package mutating func placeFile(_ contents: Data, at path: PackagePath) throws(PackageError) {
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
    public mutating func addDirectory(_ path: PackagePath) throws {
        try placeDirectory(path)
    }

    /// The typed core of ``addDirectory(_:)``, for the package's own code.
    package mutating func placeDirectory(_ path: PackagePath) throws(PackageError) {
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
