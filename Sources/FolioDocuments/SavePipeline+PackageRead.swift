import FolioCore
import Foundation

extension SavePipeline {
    /// Reads the package directory at `url` as a value, after recovering an interrupted save unless `recovering`
    /// is false.
    ///
    /// Every regular file under the root is a member, bookkeeping (`.folio-…` at the top level) aside; a member the
    /// manifest lists must be there with the listed hash. Empty directories and the directories the manifest lists
    /// are kept. Nothing is followed: a symbolic link or a special file anywhere in the package refuses it.
    ///
    /// - Parameters:
    ///   - url: the package directory.
    ///   - verifyingManifest: whether every member must match the manifest; `false` reads the members as they
    ///     are, for a package that another program may have edited in place (recovery has run first, so a
    ///     difference left is not an interrupted save of Folio's).
    ///   - recovering: `false` reads a package that is not this library's (an import) without writing anything:
    ///     the leftovers of a save that did not commit stay where they are (bookkeeping is never read as a
    ///     member), and a package whose save committed but did not finish is refused (`corruptPackage`), since
    ///     only finishing it would give its members.
    /// - Throws: ``SaveError`` `notFound`, `unsafePackage` (a link, a special file, an invalid name, an unsafe
    ///   manifest), `corruptPackage` (a member missing or different from the manifest, an unfinished save),
    ///   `readFailed`.
    public func readPackage(at url: URL, verifyingManifest: Bool = true, recovering: Bool = true) throws -> FilePackage
    {
        if recovering { try recoverPackage(at: url) }
        let action = "open \(url.lastPathComponent)"
        switch try kind(of: url, action: action) {
        case .directory:
            break
        case .absent:
            throw SaveError(.notFound, "could not \(action): there is no package at '\(PosixFileSystem.path(of: url))'")
        case .symbolicLink, .other:
            throw SaveError(
                .unsafePackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is not a package directory but a link or special file"
            )
        case .file:
            throw SaveError(
                .corruptPackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a file, not a package directory")
        }
        let manifest = try readManifest(at: url, action: action)
        if !recovering, let manifest { try refuseUnfinishedSave(of: manifest, at: url, action: action) }
        let tree = try scanPackage(at: url, action: action)
        let listed = verifyingManifest ? manifest?.filesByPath ?? [:] : [:]
        for entry in manifest?.files ?? [] where verifyingManifest && tree.files[entry.path] == nil {
            throw SaveError(
                .corruptPackage, "could not \(action): '\(entry.path)' is listed in its manifest but missing")
        }
        var package = FilePackage()
        for path in tree.files.keys.sorted() {
            let fileURL = try memberURL(path, in: url, action: action)
            let contents = try step(action, "reading '\(path)'", .readFailed) {
                try fileSystem.contents(of: fileURL)
            }
            if let entry = listed[path], entry.hash != ContentHash(hashing: contents) {
                throw SaveError(
                    .corruptPackage, "could not \(action): the contents of '\(path)' do not match its manifest")
            }
            try packageStep(action) { () throws(PackageError) in try package.placeFile(contents, at: path) }
        }
        let explicit = Set(manifest?.directories ?? []).intersection(tree.directories).union(tree.emptyDirectories)
        for directory in explicit.sorted() {
            try packageStep(action) { () throws(PackageError) in try package.placeDirectory(directory) }
        }
        return package
    }

    /// Refuses the package at `url` when a save of it reached its commit point (its staging directory has the
    /// committed manifest's generation) but did not finish moving its members into place.
    private func refuseUnfinishedSave(of manifest: PackageManifest, at url: URL, action: String) throws(SaveError) {
        let names = try step(action, "listing the package", .readFailed) {
            try fileSystem.contentsOfDirectory(at: url)
        }
        guard names.contains(PackageLayout.stagingName(generation: manifest.generation)) else { return }
        throw SaveError(
            .corruptPackage,
            "could not \(action): its last save was committed but did not finish; open it in the library that saved it, which finishes the save"
        )
    }

    /// Runs a change to the package value read from disk; a conflict there means the disk holds something a package
    /// cannot (which the scan should already have refused).
    private func packageStep(_ action: String, _ body: () throws(PackageError) -> Void) throws(SaveError) {
        do throws(PackageError) {
            try body()
        } catch {
            throw SaveError(.corruptPackage, "could not \(action): \(error.message)", cause: error)
        }
    }
}
