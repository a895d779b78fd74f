import FolioCore
import Foundation

/// The names of Folio's bookkeeping inside a package directory, all at the top level and starting with `.folio-`:
///
/// - `.folio-manifest`: the committed manifest (``PackageManifest``);
/// - `.folio-manifest.folio-tmp`: the next manifest while it is written;
/// - `.folio-staging-<generation>/`: the changed members of the save that writes manifest `<generation>`, each
///   named by the SHA-256 of its path, until they are moved into place.
///
/// A member may not use a top-level name starting with `.folio-`.
enum PackageLayout {
    static let manifestName = ".folio-manifest"
    static let manifestTemporaryName = ".folio-manifest.folio-tmp"
    static let stagingPrefix = ".folio-staging-"
    static let reservedPrefix = ".folio-"
    /// The most files and directories a package may hold.
    static let maximumEntries = 1 << 20

    /// Whether `path` lies in Folio's reserved names.
    static func isBookkeeping(_ path: PackagePath) -> Bool {
        isReserved(path.components[0])
    }

    /// Whether the top-level name `name` starts with `.folio-`, compared as bytes (as the file system does), not as
    /// Characters, which a combining mark after the `-` would change.
    static func isReserved(_ name: String) -> Bool {
        name.utf8.starts(with: reservedPrefix.utf8)
    }

    /// The staging directory's name for the save that writes manifest `generation`.
    static func stagingName(generation: Int) -> String { "\(stagingPrefix)\(generation)" }

    /// The generation a staging directory's name carries, if it is one.
    static func generation(ofStagingName name: String) -> Int? {
        guard name.utf8.starts(with: stagingPrefix.utf8) else { return nil }
        let digits = String(decoding: name.utf8.dropFirst(stagingPrefix.utf8.count), as: UTF8.self)
        // Only the name a save writes: `+5` or `05` would otherwise stand for generation 5 too.
        guard let generation = Int(digits), String(generation) == digits else { return nil }
        return generation
    }

    /// The name of a member's staged copy: the hex SHA-256 of its path, so that any path gets a short, safe name.
    static func stagedName(for path: PackagePath) -> String {
        ContentHash(hashing: Data(path.description.utf8)).hex
    }
}

/// The members found on disk in a package directory, bookkeeping aside.
struct PackageTree: Sendable {
    /// Each regular file's size, by path.
    var files: [PackagePath: Int] = [:]
    /// Every directory.
    var directories: Set<PackagePath> = []

    /// The directories that hold nothing.
    var emptyDirectories: Set<PackagePath> {
        var nonEmpty = Set<PackagePath>()
        for path in files.keys { nonEmpty.formUnion(path.ancestors) }
        for path in directories { nonEmpty.formUnion(path.ancestors) }
        return directories.subtracting(nonEmpty)
    }
}

extension SavePipeline {
    /// The URL of the member `path` under `root`, checked to stay inside `root` even though a `PackagePath` cannot
    /// leave it.
    ///
    /// - Throws: ``SaveError`` `unsafePackage` if the joined path escapes the root.
    func memberURL(_ path: PackagePath, in root: URL, action: String) throws(SaveError) -> URL {
        var url = root
        for component in path.components { url.appendPathComponent(component, isDirectory: false) }
        let rootPath = PosixFileSystem.path(of: root.standardizedFileURL)
        let memberPath = PosixFileSystem.path(of: url.standardizedFileURL)
        let prefix = rootPath == "/" ? "/" : rootPath + "/"
        // Bytes, not Characters: a mark after the `/` would make the Character prefix fail to match, or match another.
        guard memberPath.utf8.starts(with: prefix.utf8), memberPath.utf8.count > prefix.utf8.count else {
            throw SaveError(
                .unsafePackage,
                "could not \(action): the entry '\(path)' would land outside the package at '\(memberPath)'")
        }
        return url
    }

    /// Lists the members on disk under `root` without following links, skipping top-level bookkeeping.
    ///
    /// - Throws: ``SaveError`` `unsafePackage` for a symbolic link, a special file or an invalid name;
    ///   `readFailed` when listing fails.
    func scanPackage(at root: URL, action: String) throws(SaveError) -> PackageTree {
        var tree = PackageTree()
        var pending: [(url: URL, path: PackagePath?)] = [(root, nil)]
        var entryCount = 0
        while let (directoryURL, directoryPath) = pending.popLast() {
            let names = try step(action, "listing '\(directoryPath?.description ?? ".")'", .readFailed) {
                try fileSystem.contentsOfDirectory(at: directoryURL)
            }
            for name in names {
                if directoryPath == nil && PackageLayout.isReserved(name) { continue }
                let text = directoryPath.map { "\($0)/\(name)" } ?? name
                let path: PackagePath
                do throws(PackageError) {
                    path = try PackagePath(checking: text)
                } catch {
                    throw SaveError(
                        .unsafePackage,
                        "could not \(action): the package holds an entry with an unsafe name: \(error.message)",
                        cause: error)
                }
                entryCount += 1
                guard entryCount <= PackageLayout.maximumEntries else {
                    throw SaveError(
                        .unsafePackage,
                        "could not \(action): the package holds more than \(PackageLayout.maximumEntries) entries")
                }
                let url = directoryURL.appendingPathComponent(name, isDirectory: false)
                let attributes = try step(action, "examining '\(path)'", .readFailed) {
                    try fileSystem.attributes(at: url)
                }
                switch attributes.kind {
                case .file:
                    tree.files[path] = attributes.size
                case .directory:
                    tree.directories.insert(path)
                    pending.append((url, path))
                case .symbolicLink:
                    throw SaveError(
                        .unsafePackage,
                        "could not \(action): '\(path)' in the package is a symbolic link, which a package may not hold"
                    )
                case .other, .absent:
                    throw SaveError(
                        .unsafePackage,
                        "could not \(action): '\(path)' in the package is a special file (a FIFO, socket or device), which a package may not hold"
                    )
                }
            }
        }
        return tree
    }

    /// The committed manifest of the package at `root`, or `nil` when it has none.
    ///
    /// - Throws: ``SaveError`` `corruptPackage` or `unsafePackage` for a bad manifest, `readFailed` when it cannot
    ///   be read.
    func readManifest(at root: URL, action: String) throws(SaveError) -> PackageManifest? {
        let url = root.appendingPathComponent(PackageLayout.manifestName, isDirectory: false)
        let kind = try step(action, "examining the manifest", .readFailed) {
            try fileSystem.itemKind(at: url)
        }
        switch kind {
        case .absent:
            return nil
        case .file:
            break
        case .symbolicLink, .other:
            throw SaveError(
                .unsafePackage,
                "could not \(action): its manifest is a \(kind == .other ? "special file" : "symbolic link")")
        case .directory:
            throw SaveError(.corruptPackage, "could not \(action): its manifest is a directory")
        }
        let size = try step(action, "examining the manifest", .readFailed) {
            try fileSystem.attributes(at: url).size
        }
        guard size <= PackageManifest.maximumSize else {
            throw SaveError(
                .corruptPackage, "could not \(action): its manifest is larger than \(PackageManifest.maximumSize) bytes"
            )
        }
        let data = try step(action, "reading the manifest", .readFailed) {
            try fileSystem.contents(of: url)
        }
        return try PackageManifest(decoding: data, packageName: root.lastPathComponent)
    }
}
