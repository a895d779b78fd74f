import FolioCore
import Foundation

/// The work after a package save's commit point: what must change on disk to match the committed manifest.
struct RollForwardPlan: Sendable {
    /// Files on disk that the manifest does not list, in order.
    var removedFiles: [PackagePath]
    /// Directories on disk that the manifest does not need, deepest first.
    var removedDirectories: [PackagePath]
    /// Directories the manifest needs that are not on disk, parents first.
    var createdDirectories: [PackagePath]
    /// Members whose staged copy moves into place, in order.
    var staged: [PackagePath]

    /// The plan that turns `tree` into `manifest`'s members, with `staged` members coming from the staging directory.
    init(manifest: PackageManifest, tree: PackageTree, staged: [PackagePath]) {
        let listed = Set(manifest.files.map(\.path))
        let directories = manifest.allDirectories
        removedFiles = tree.files.keys.filter { !listed.contains($0) }.sorted()
        // Reverse path order puts every directory after the ones below it.
        removedDirectories = tree.directories.subtracting(directories).sorted(by: >)
        createdDirectories = directories.subtracting(tree.directories).sorted()
        self.staged = staged
    }

    /// Whether the disk already matches.
    var isEmpty: Bool {
        removedFiles.isEmpty && removedDirectories.isEmpty && createdDirectories.isEmpty && staged.isEmpty
    }

    /// The directories in which the plan creates directories, deepest first; `nil` for the root, which comes last.
    var parentsOfCreatedDirectories: [PackagePath?] {
        let parents = Set(createdDirectories.map { $0.ancestors.last })
        return parents.compactMap { $0 }.sorted(by: >) + (parents.contains(nil) ? [nil] : [])
    }

    /// The directories whose entries the plan changes, deepest first (the root is not listed).
    var touchedDirectories: [PackagePath] {
        var result = Set<PackagePath>(createdDirectories)
        for path in removedFiles + removedDirectories + createdDirectories + staged {
            if let parent = path.ancestors.last { result.insert(parent) }
        }
        return result.subtracting(removedDirectories).sorted(by: >)
    }
}

extension SavePipeline {
    /// Finishes or discards what an interrupted save left at `url`, so that the package on disk is complete.
    ///
    /// Called by ``readPackage(at:verifyingManifest:recovering:)`` (unless `recovering` is false) and at the start
    /// of every package save. The rules:
    /// - a hidden `.Name.folio-tmp` directory next to the package (a first save that did not reach its rename) and a
    ///   `.folio-manifest.folio-tmp` inside it (a manifest not committed) are removed;
    /// - a `.folio-staging-<n>` directory whose `n` is not the committed manifest's generation belongs to a save that
    ///   did not commit: it is removed, and the previous package, untouched, stays;
    /// - a staging directory whose generation matches the manifest belongs to a committed save that did not finish:
    ///   its staged members (each checked against the manifest's hash) are moved into place, members the manifest
    ///   no longer lists are removed, directories are created or removed, and the staging directory goes last.
    ///
    /// Without a staging directory nothing is read: a package whose save finished is complete.
    ///
    /// - Throws: ``SaveError`` `corruptPackage` when a member the manifest lists is missing and no staged copy is
    ///   left (or a staged copy is damaged), `unsafePackage` for an unsafe manifest or tree, or the code of the
    ///   failing step.
    public func recoverPackage(at url: URL) throws(SaveError) {
        let action = "recover \(url.lastPathComponent)"
        let sibling = url.deletingLastPathComponent()
            .appendingPathComponent(Self.temporaryName(for: url.lastPathComponent), isDirectory: true)
        if try kind(of: sibling, action: action) != .absent {
            try step(action, "removing an unfinished new package", .writeFailed) {
                try fileSystem.remove(at: sibling)
            }
        }
        switch try kind(of: url, action: action) {
        case .absent:
            return
        case .directory:
            break
        case .symbolicLink:
            throw SaveError(
                .unsafePackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a symbolic link, not a package directory")
        case .other:
            throw SaveError(
                .unsafePackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a special file, not a package directory")
        case .file:
            throw SaveError(
                .corruptPackage,
                "could not \(action): '\(PosixFileSystem.path(of: url))' is a file, not a package directory")
        }

        let names = try step(action, "listing the package", .readFailed) {
            try fileSystem.contentsOfDirectory(at: url)
        }
        var removedLeftovers = false
        if names.contains(PackageLayout.manifestTemporaryName) {
            let temporary = url.appendingPathComponent(PackageLayout.manifestTemporaryName, isDirectory: false)
            try step(action, "removing an uncommitted manifest", .writeFailed) {
                try fileSystem.remove(at: temporary)
            }
            removedLeftovers = true
        }
        let stagings = names.filter { $0.utf8.starts(with: PackageLayout.stagingPrefix.utf8) }
            .map { name in (name, PackageLayout.generation(ofStagingName: name)) }
        let manifest = stagings.isEmpty ? nil : try readManifest(at: url, action: action)
        var committed: (manifest: PackageManifest, staging: URL)?
        for (name, generation) in stagings {
            let staging = url.appendingPathComponent(name, isDirectory: true)
            if let manifest, manifest.generation == generation {
                committed = (manifest, staging)
            } else {
                try step(action, "removing the staging directory of an uncommitted save", .writeFailed) {
                    try fileSystem.remove(at: staging)
                }
                removedLeftovers = true
            }
        }
        if let (manifest, staging) = committed {
            try finishCommittedSave(manifest, root: url, staging: staging, action: action)
        } else if removedLeftovers {
            try syncDirectory(url, "the package directory", in: action)
        }
    }

    /// Rolls a committed save forward from its staging directory.
    private func finishCommittedSave(_ manifest: PackageManifest, root: URL, staging: URL, action: String)
        throws(SaveError)
    {
        let tree = try scanPackage(at: root, action: action)
        let stagedNames = Set(
            try step(action, "listing the staging directory", .readFailed) {
                try fileSystem.contentsOfDirectory(at: staging)
            })
        var staged: [PackagePath] = []
        for entry in manifest.files {
            let name = PackageLayout.stagedName(for: entry.path)
            if stagedNames.contains(name) {
                let stagedURL = staging.appendingPathComponent(name, isDirectory: false)
                let contents = try step(action, "reading the staged copy of '\(entry.path)'", .readFailed) {
                    try fileSystem.contents(of: stagedURL)
                }
                guard contents.count == entry.size, ContentHash(hashing: contents) == entry.hash else {
                    throw SaveError(
                        .corruptPackage,
                        "could not \(action): the staged copy of '\(entry.path)' does not match the committed manifest")
                }
                staged.append(entry.path)
            } else if tree.files[entry.path] != entry.size {
                throw SaveError(
                    .corruptPackage,
                    "could not \(action): '\(entry.path)' is missing or has the wrong size, and no staged copy is left to restore it"
                )
            }
        }
        let plan = RollForwardPlan(manifest: manifest, tree: tree, staged: staged)
        try rollForward(plan, root: root, staging: staging, action: action)
    }

    /// Carries out `plan` after the commit point; every step can be repeated, so recovery may run it again after a
    /// crash in the middle.
    func rollForward(_ plan: RollForwardPlan, root: URL, staging: URL, action: String) throws(SaveError) {
        for path in plan.removedFiles + plan.removedDirectories {
            let memberURL = try memberURL(path, in: root, action: action)
            try step(action, "removing '\(path)'", .writeFailed) {
                do {
                    try fileSystem.remove(at: memberURL)
                } catch let error as FileSystemError where error.code == .notFound {
                    // Already gone with a directory above it.
                }
            }
        }
        for path in plan.createdDirectories {
            let memberURL = try memberURL(path, in: root, action: action)
            try step(action, "creating the directory '\(path)'", .writeFailed) {
                do {
                    try fileSystem.createDirectory(at: memberURL)
                } catch let error as FileSystemError where error.code == .exists {
                    guard try fileSystem.itemKind(at: memberURL) == .directory else { throw error }
                }
            }
        }
        // A new directory must be durable before a member moves into it: a power cut could otherwise keep the move
        // (and so the staged copy's removal) but not the directory's creation, and lose the member.
        for parent in plan.parentsOfCreatedDirectories {
            var parentURL = root
            if let parent { parentURL = try memberURL(parent, in: root, action: action) }
            let name = parent.map { "the directory '\($0)'" } ?? "the package directory"
            try syncDirectory(parentURL, "\(name) after creating directories", in: action)
        }
        for path in plan.staged {
            let memberURL = try memberURL(path, in: root, action: action)
            let stagedURL = staging.appendingPathComponent(PackageLayout.stagedName(for: path), isDirectory: false)
            try rename(stagedURL, to: memberURL, "moving '\(path)' into place", in: action)
        }
        for path in plan.touchedDirectories {
            let memberURL = try memberURL(path, in: root, action: action)
            try syncDirectory(memberURL, "the directory '\(path)'", in: action)
        }
        // The renames out of the root must be durable before the staging directory, the journal, goes.
        try syncDirectory(root, "the package directory", in: action)
        try step(action, "removing the staging directory", .writeFailed) {
            try fileSystem.remove(at: staging)
        }
        try syncDirectory(root, "the package directory", in: action)
    }

    func kind(of url: URL, action: String) throws(SaveError) -> FileItemKind {
        try step(action, "examining '\(PosixFileSystem.path(of: url))'", .readFailed) {
            try fileSystem.itemKind(at: url)
        }
    }
}
