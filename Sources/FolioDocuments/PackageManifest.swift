import FolioCore
import Foundation

/// The list of a package's members that a save writes last, as its commit point: each file's path, size and
/// SHA-256, the explicit directories, and a generation number that names the save that wrote it.
///
/// It is JSON with sorted keys and entries in path order, so the same package always gives the same bytes. A
/// manifest read from disk is untrusted: every path is validated as a `PackagePath`.
struct PackageManifest: Equatable, Sendable {
    /// One member file.
    struct Entry: Equatable, Sendable {
        var path: PackagePath
        var size: Int
        var hash: ContentHash
    }

    /// The format's name, written in the manifest.
    static let format = "folio-package-manifest-1"
    /// The largest manifest read, in bytes.
    static let maximumSize = 64 << 20
    /// The highest generation read: far beyond any number of saves, and low enough that the next save's number
    /// (one more) is always an `Int`, and exact in any JSON reader.
    static let maximumGeneration = 1 << 53

    /// The save that wrote it: one more than the manifest it replaced. Names the staging directory of that save.
    var generation: Int
    /// The files, in path order.
    var files: [Entry]
    /// The directories the package holds explicitly, in order (directories above files are implied).
    var directories: [PackagePath]

    /// The manifest of `package`, for the save numbered `generation`.
    init(package: FilePackage, generation: Int) {
        self.generation = generation
        files = package.manifest.map { Entry(path: $0.path, size: $0.size, hash: $0.hash) }
        directories = package.directories.sorted()
    }

    /// The files by path.
    var filesByPath: [PackagePath: Entry] {
        Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0) })
    }

    /// Every directory the package needs on disk: explicit ones, those above files and those above explicit ones.
    var allDirectories: Set<PackagePath> {
        var result = Set<PackagePath>()
        for directory in directories {
            result.insert(directory)
            result.formUnion(directory.ancestors)
        }
        for file in files { result.formUnion(file.path.ancestors) }
        return result
    }

    /// Whether the two list the same members (the generation aside).
    func hasSameMembers(as other: PackageManifest) -> Bool {
        files == other.files && directories == other.directories
    }

    // MARK: - Encoding

    private struct Stored: Codable {
        struct File: Codable {
            var path: String
            var size: Int
            var sha256: String
        }
        var format: String
        var generation: Int
        var files: [File]
        var directories: [String]
    }

    /// The manifest's bytes: pretty-printed JSON, sorted keys, entries in path order.
    func encoded() -> Data {
        let stored = Stored(
            format: Self.format, generation: generation,
            files: files.map { Stored.File(path: $0.path.description, size: $0.size, sha256: $0.hash.hex) },
            directories: directories.map(\.description)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain strings and integers cannot fail.
        var data = try! encoder.encode(stored)
        data.append(0x0A)
        return data
    }

    /// Decodes and validates an untrusted manifest read from the package `packageName`.
    ///
    /// - Throws: ``SaveError`` `corruptPackage` when it is not a manifest, `unsafePackage` when it names an invalid
    ///   path (`..`, an absolute path, a NUL…).
    init(decoding data: Data, packageName: String) throws(SaveError) {
        let action = "open \(packageName)"
        let stored: Stored
        do {
            stored = try JSONDecoder().decode(Stored.self, from: data)
        } catch {
            throw SaveError(
                .corruptPackage, "could not \(action): its manifest is not valid JSON of the expected shape")
        }
        guard stored.format == Self.format else {
            throw SaveError(
                .corruptPackage, "could not \(action): its manifest has the unknown format '\(stored.format)'")
        }
        guard (1...Self.maximumGeneration).contains(stored.generation) else {
            throw SaveError(
                .corruptPackage,
                "could not \(action): its manifest has the invalid generation \(stored.generation) (from 1 to \(Self.maximumGeneration))"
            )
        }
        guard stored.files.count + stored.directories.count <= PackageLayout.maximumEntries else {
            throw SaveError(
                .corruptPackage,
                "could not \(action): its manifest lists more than \(PackageLayout.maximumEntries) entries")
        }
        var files: [Entry] = []
        files.reserveCapacity(stored.files.count)
        for file in stored.files {
            let path = try Self.validated(file.path, action: action)
            guard file.size >= 0, let hash = Self.hash(hex: file.sha256) else {
                throw SaveError(
                    .corruptPackage, "could not \(action): its manifest has an invalid size or hash for '\(path)'")
            }
            files.append(Entry(path: path, size: file.size, hash: hash))
        }
        var directories: [PackagePath] = []
        for text in stored.directories { directories.append(try Self.validated(text, action: action)) }
        for (index, file) in files.enumerated().dropFirst() where !(files[index - 1].path < file.path) {
            throw SaveError(
                .corruptPackage, "could not \(action): its manifest lists '\(file.path)' out of order or twice")
        }
        for (index, directory) in directories.enumerated().dropFirst() where !(directories[index - 1] < directory) {
            throw SaveError(
                .corruptPackage,
                "could not \(action): its manifest lists the directory '\(directory)' out of order or twice")
        }
        generation = stored.generation
        self.files = files
        self.directories = directories
    }

    private static func validated(_ text: String, action: String) throws(SaveError) -> PackagePath {
        do throws(PackageError) {
            let path = try PackagePath(checking: text)
            guard !PackageLayout.isBookkeeping(path) else {
                throw PackageError(.invalidPath, "package entry '\(text)' uses a name reserved for Folio's bookkeeping")
            }
            return path
        } catch {
            throw SaveError(
                .unsafePackage, "could not \(action): its manifest lists an unsafe entry: \(error.message)",
                cause: error)
        }
    }

    private static func hash(hex: String) -> ContentHash? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return ContentHash(bytes: bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
