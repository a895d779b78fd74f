import FolioCore
import FolioFiles
import Foundation
import Synchronization

/// The directories a simulator's runs work in, emptied after a run and reused by the next instead of removed and
/// made again.
///
/// A run makes a directory per device and, in each, the library's `.folio/`, `Documents/` and `Shared/`: a dozen
/// directories for three devices, about as many as the files the run saves. Where the file system is slow to
/// allocate inodes after many deletions (ext4 without a journal skips the inodes freed in the last minutes, and
/// scans past them for each new one), making and removing them was a large part of a fuzzing run. A finished run's
/// directory keeps those directories, empty, and loses everything else; it is reused only once nothing else is left
/// in it, so a run never sees what another left. The spare directories are removed when the pool is released.
final class RunDirectories: Sendable {
    /// The file system the directories are emptied and removed on: the runs' own.
    let fileSystem: any FileSystem

    init(fileSystem: any FileSystem) {
        self.fileSystem = fileSystem
    }

    /// How deep the kept directories go: the run's directory, its device directories and theirs (`.folio/`,
    /// `Documents/`, `Shared/`). Anything deeper (a package document is a directory) is removed.
    static let keptDepth = 2

    /// Emptied run directories, by the directory they are in.
    private let spare = Mutex<[String: [URL]]>([:])

    /// An empty directory to run in, in `parent`: a spare one, or a new name (the run makes it).
    func take(in parent: URL) -> URL {
        spare.withLock { $0[parent.path]?.popLast() } ?? Self.newDirectory(in: parent)
    }

    /// A run directory's URL in `parent` under a name of its own (not yet made).
    static func newDirectory(in parent: URL) -> URL {
        parent.appendingPathComponent("folio-run-\(RandomIdentifierSource().next())", isDirectory: true)
    }

    /// Takes back `directory`, in `parent`, after its run: emptied and kept for the next run, or removed when it
    /// cannot be emptied.
    func giveBack(_ directory: URL, in parent: URL) {
        if Self.empty(directory, keepingDirectoriesTo: Self.keptDepth, on: fileSystem) {
            spare.withLock { $0[parent.path, default: []].append(directory) }
        } else {
            try? fileSystem.remove(at: directory)
        }
    }

    deinit {
        for directory in spare.withLock({ Array($0.values.joined()) }) { try? fileSystem.remove(at: directory) }
    }

    /// Removes everything in `directory` but its subdirectories down to `depth` levels, which are emptied the same
    /// way; whether that succeeded (`false`: something is left that should not be, or `directory` is not there).
    static func empty(
        _ directory: URL, keepingDirectoriesTo depth: Int, on fileSystem: any FileSystem = PosixFileSystem()
    ) -> Bool {
        guard let names = try? fileSystem.contentsOfDirectory(at: directory) else { return false }
        for name in names {
            // With a directory hint, Foundation does not look at the disk to make the URL.
            let child = directory.appendingPathComponent(name, isDirectory: false)
            if depth > 0, (try? fileSystem.itemKind(at: child)) == .directory {
                guard empty(child, keepingDirectoriesTo: depth - 1, on: fileSystem) else { return false }
            } else {
                // A link is removed, not followed; a directory goes with everything in it.
                guard (try? fileSystem.remove(at: child)) != nil else { return false }
            }
        }
        return true
    }
}
