import FolioCore
import Foundation

/// Writes a document's snapshot to disk so that a crash at any moment leaves either the previous complete snapshot
/// or the new complete one, never a torn one; and reads it back.
///
/// - A flat file (``saveFlat(_:to:)``) goes through a temporary file in the same directory: write, fsync, rename
///   over the old file, fsync the directory.
/// - A package (``savePackage(_:to:incremental:)``) rewrites only the members whose content hash changed: they are
///   staged inside the package, then a new manifest is renamed over the old one (the commit point), then the staged
///   members are moved into place. ``recoverPackage(at:)`` finishes or discards an interrupted save.
///
/// All I/O goes through the injected `FileSystem`, so tests and the simulator can crash or fail any step. Every path
/// written is a validated `PackagePath` joined under the package root and checked to stay inside it.
public struct SavePipeline: Sendable {
    /// The file system the pipeline reads and writes.
    public let fileSystem: any FileSystem

    /// A pipeline on `fileSystem` (the real one by default).
    public init(fileSystem: any FileSystem = PosixFileSystem()) {
        self.fileSystem = fileSystem
    }

    /// Saves `contents` at `url`: a flat file for `.data`, a package directory for `.package`.
    ///
    /// - Parameters:
    ///   - contents: the snapshot to write.
    ///   - url: the file or package directory to write.
    ///   - incremental: for a package, whether members whose hash matches the manifest on disk are kept;
    ///     pass `false` after a failed save so that everything is rewritten.
    /// - Throws: ``SaveError``.
    @discardableResult
    public func save(_ contents: DocumentContents, to url: URL, incremental: Bool = true) throws -> SaveReport {
        switch contents {
        case .data(let data):
            try saveFlat(data, to: url)
            return SaveReport(bytesWritten: data.count, filesWritten: 1)
        case .package(let package):
            return try savePackage(package, to: url, incremental: incremental)
        }
    }

    /// Reads the snapshot at `url`, a package when `isPackage`, after recovering an interrupted save.
    ///
    /// - Parameters:
    ///   - url: the file or package directory to read.
    ///   - isPackage: whether `url` is a package directory rather than a flat file.
    ///   - recovering: `false` reads a file that is not this library's (an import) without writing
    ///     anything: leftovers of an unfinished save next to the file or inside the package stay where they are
    ///     and are not read, and a package whose save committed but did not finish is refused.
    /// - Throws: ``SaveError``.
    public func read(at url: URL, isPackage: Bool, recovering: Bool = true) throws -> DocumentContents {
        isPackage
            ? .package(try readPackage(at: url, recovering: recovering))
            : .data(try readFlat(at: url, recovering: recovering))
    }

    // MARK: - Helpers

    /// The hidden temporary name next to `name` that a save writes before renaming: `.Notes.txt.folio-tmp`.
    ///
    /// It is fixed, not random, so that runs are reproducible and the next open finds a leftover by name.
    static func temporaryName(for name: String) -> String {
        // Keep within NAME_MAX (255 bytes) for long names.
        if name.utf8.count <= 200 { return ".\(name).folio-tmp" }
        return ".folio-tmp-\(ContentHash(hashing: Data(name.utf8)).hex.prefix(32))"
    }

    /// Runs one file-system step, translating its failure into a ``SaveError`` that names the step: a
    /// `FileSystemError` by its code, any other error a custom file system throws with the step's code, kept as
    /// the cause.
    func step<Result>(
        _ action: String, _ step: String, _ code: SaveErrorCode,
        _ body: () throws -> Result
    ) throws(SaveError) -> Result {
        do {
            return try body()
        } catch {
            throw SaveError(error, action: action, step: step, stepCode: code)
        }
    }

    /// Writes `contents` to `url` and flushes it to the disk, as two steps of `action` named after `what`: "writing
    /// W", then "fsync of W".
    func writeAndSync(_ contents: Data, to url: URL, _ what: String, in action: String) throws(SaveError) {
        try step(action, "writing \(what)", .writeFailed) { try fileSystem.writeFile(contents, to: url) }
        try syncFile(url, what, in: action)
    }

    /// Flushes the file at `url` to the disk, as the step "fsync of W" of `action`.
    func syncFile(_ url: URL, _ what: String, in action: String) throws(SaveError) {
        try step(action, "fsync of \(what)", .syncFailed) { try fileSystem.synchronizeFile(at: url) }
    }

    /// Flushes the directory at `url` (its entries) to the disk, as the step "fsync of W" of `action`.
    func syncDirectory(_ url: URL, _ what: String, in action: String) throws(SaveError) {
        try step(action, "fsync of \(what)", .syncFailed) { try fileSystem.synchronizeDirectory(at: url) }
    }

    /// Renames `source` to `destination` (over what is there), as the step `name` of `action`.
    func rename(_ source: URL, to destination: URL, _ name: String, in action: String) throws(SaveError) {
        try step(action, name, .renameFailed) { try fileSystem.rename(source, to: destination) }
    }

    /// Removes `url` if something is there, ignoring failures: cleanup after a failed save must not hide its error.
    func removeQuietly(_ url: URL) {
        if let kind = try? fileSystem.itemKind(at: url), kind != .absent {
            try? fileSystem.remove(at: url)
        }
    }
}
