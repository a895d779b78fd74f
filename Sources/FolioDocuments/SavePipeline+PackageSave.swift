import FolioCore
import Foundation

extension SavePipeline {
    /// Saves `package` as the package directory at `url`, rewriting only the members whose content changed.
    ///
    /// The protocol (a redo journal whose commit point is the manifest):
    /// 1. recover an earlier interrupted save (``recoverPackage(at:)``), read the committed manifest and list the
    ///    members on disk; a member is unchanged when the manifest has its path, size and hash and a file of that
    ///    size is in place (unchanged members are never read or rewritten);
    /// 2. create `.folio-staging-<generation>/`, write each changed member there and fsync it, fsync the staging
    ///    directory;
    /// 3. write the new manifest (generation + 1) to `.folio-manifest.folio-tmp`, fsync it, fsync the package
    ///    directory;
    /// 4. **commit**: rename it over `.folio-manifest`, fsync the package directory;
    /// 5. roll forward: remove deleted members and directories, create new directories and fsync the directories
    ///    holding them, rename the staged members into place, fsync the directories touched, remove the staging
    ///    directory, fsync the package directory.
    ///
    /// A crash before step 4 leaves the previous package, plus leftovers the next recovery removes; after it,
    /// recovery finishes step 5 from the staging directory whose generation matches the manifest. A new package is
    /// built in a hidden directory next to `url` and renamed into place.
    ///
    /// - Parameters:
    ///   - package: the members and directories to write.
    ///   - url: the package directory; created when nothing is there.
    ///   - incremental: `false` rewrites every member (after a failed save: rewrite, don't trust the disk).
    /// - Returns: What was written; empty when nothing changed.
    /// - Throws: ``SaveError``: `unsafePackage` for a reserved or unsafe name or a link or special file in the
    ///   directory, `corruptPackage`, or the code of the failing step (`writeFailed`, `syncFailed`, `renameFailed`,
    ///   `noSpace`, `permissionDenied`, `crashed`).
    @discardableResult
    public func savePackage(_ package: FilePackage, to url: URL, incremental: Bool = true) throws -> SaveReport {
        let action = "save \(url.lastPathComponent)"
        for path in package.filePaths + package.directories.sorted() where PackageLayout.isBookkeeping(path) {
            throw SaveError(
                .unsafePackage,
                "could not \(action): the entry '\(path)' uses a name reserved for Folio's bookkeeping (.folio-…)")
        }
        let kind = try step(action, "examining the package", .readFailed) {
            try fileSystem.itemKind(at: url)
        }
        switch kind {
        case .absent:
            return try createPackage(package, at: url, action: action)
        case .directory:
            break
        case .symbolicLink, .other:
            throw SaveError(
                .unsafePackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a \(kind == .other ? "special file" : "symbolic link"), not a package directory"
            )
        case .file:
            throw SaveError(
                .corruptPackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a file, not a package directory")
        }

        try recoverPackage(at: url)
        let old = try readManifest(at: url, action: action)
        let tree = try scanPackage(at: url, action: action)
        let new = PackageManifest(package: package, generation: (old?.generation ?? 0) + 1)
        let oldEntries = old?.filesByPath ?? [:]
        let changed = new.files.filter { entry in
            !incremental || oldEntries[entry.path] != entry || tree.files[entry.path] != entry.size
        }
        let plan = RollForwardPlan(manifest: new, tree: tree, staged: changed.map(\.path))
        if plan.isEmpty, let old, old.hasSameMembers(as: new) { return SaveReport() }
        for path in plan.removedFiles + plan.removedDirectories + plan.createdDirectories + plan.staged {
            _ = try memberURL(path, in: url, action: action)
        }

        let staging = url.appendingPathComponent(
            PackageLayout.stagingName(generation: new.generation), isDirectory: true)
        let manifestURL = url.appendingPathComponent(PackageLayout.manifestName, isDirectory: false)
        let manifestTemporary = url.appendingPathComponent(PackageLayout.manifestTemporaryName, isDirectory: false)
        var bytesWritten = 0
        do throws(SaveError) {
            try step(action, "creating the staging directory", .writeFailed) {
                try fileSystem.createDirectory(at: staging)
            }
            for entry in changed {
                let stagedURL = staging.appendingPathComponent(
                    PackageLayout.stagedName(for: entry.path), isDirectory: false)
                let contents = package[entry.path]!.contents
                try writeAndSync(contents, to: stagedURL, "'\(entry.path)'", in: action)
                bytesWritten += contents.count
            }
            try syncDirectory(staging, "the staging directory", in: action)
            let manifestData = new.encoded()
            try writeAndSync(manifestData, to: manifestTemporary, "the new manifest", in: action)
            bytesWritten += manifestData.count
            try syncDirectory(url, "the package directory", in: action)
            // The commit point: from here on, recovery finishes this save instead of discarding it.
            try rename(manifestTemporary, to: manifestURL, "committing the new manifest", in: action)
        } catch {
            removeQuietly(staging)
            removeQuietly(manifestTemporary)
            throw error
        }
        try syncDirectory(url, "the package directory after the commit", in: action)
        try rollForward(plan, root: url, staging: staging, action: action)
        return SaveReport(
            bytesWritten: bytesWritten, filesWritten: changed.count, filesRemoved: plan.removedFiles.count)
    }

    /// Writes a package where nothing is yet: builds it complete in a hidden directory next to `url`, then renames
    /// that directory into place (the commit point) and fsyncs the parent.
    private func createPackage(_ package: FilePackage, at url: URL, action: String) throws(SaveError) -> SaveReport {
        try recoverPackage(at: url)
        let parent = url.deletingLastPathComponent()
        let temporary = parent.appendingPathComponent(Self.temporaryName(for: url.lastPathComponent), isDirectory: true)
        let manifest = PackageManifest(package: package, generation: 1)
        let directories = manifest.allDirectories.sorted()
        var bytesWritten = 0
        do throws(SaveError) {
            try step(action, "creating the temporary package directory", .writeFailed) {
                try fileSystem.createDirectory(at: temporary)
            }
            for directory in directories {
                let directoryURL = try memberURL(directory, in: temporary, action: action)
                try step(action, "creating the directory '\(directory)'", .writeFailed) {
                    try fileSystem.createDirectory(at: directoryURL)
                }
            }
            for entry in manifest.files {
                let fileURL = try memberURL(entry.path, in: temporary, action: action)
                let contents = package[entry.path]!.contents
                try step(action, "writing '\(entry.path)'", .writeFailed) {
                    try fileSystem.writeFile(contents, to: fileURL)
                }
                try syncFile(fileURL, "'\(entry.path)'", in: action)
                bytesWritten += contents.count
            }
            let manifestURL = temporary.appendingPathComponent(PackageLayout.manifestName, isDirectory: false)
            let manifestData = manifest.encoded()
            try step(action, "writing the manifest", .writeFailed) {
                try fileSystem.writeFile(manifestData, to: manifestURL)
            }
            try syncFile(manifestURL, "the manifest", in: action)
            bytesWritten += manifestData.count
            for directory in directories.reversed() {
                let directoryURL = try memberURL(directory, in: temporary, action: action)
                try syncDirectory(directoryURL, "the directory '\(directory)'", in: action)
            }
            try syncDirectory(temporary, "the temporary package directory", in: action)
            // The commit point of a new package.
            try rename(temporary, to: url, "moving the new package into place", in: action)
        } catch {
            removeQuietly(temporary)
            throw error
        }
        try syncDirectory(parent, "the directory holding it", in: action)
        return SaveReport(bytesWritten: bytesWritten, filesWritten: manifest.files.count)
    }
}
