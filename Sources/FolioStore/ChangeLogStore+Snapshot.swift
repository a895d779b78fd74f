import FolioFiles
import Foundation

extension ChangeLogStore {
    /// Copies the store at `source` (its file and write-ahead log) to `destination`, writing nothing next to
    /// `source`: for tools that look at someone's library without touching it (`folio inspect` opens the copy,
    /// whose opening may recover, record and checkpoint as any opening does).
    ///
    /// The files are copied as they are, and the copy is kept only if neither file changed while it was made (same
    /// size, modification time and file number before and after); otherwise it is made again, up to `attempts`
    /// times. A copy of files that did not change is what a process killed at that instant would have left, which
    /// SQLite's recovery turns into the store as of its last commit, so a library in use by a running app is copied
    /// as of one commit. No SQLite connection is opened on `source`: even a read-only one may create the
    /// shared-memory file beside it.
    ///
    /// The copy is made under temporary names beside `destination` (`.partial`), synced, then linked to its names
    /// (the log first, so that a store file there always has its log), and the directory synced: `destination` is
    /// the whole copy or nothing, and never replaces a file that appeared there meanwhile.
    ///
    /// - Parameters:
    ///   - source: the store's SQLite file; its write-ahead log, if any, is copied with it.
    ///   - destination: where the copy goes; nothing may be there yet.
    ///   - attempts: the most times the copy is made while the files keep changing (at least once).
    ///   - fileSystem: every file call the copy makes (inject a fault-injecting one to test failures).
    /// - Throws: ``StoreError`` `notAStore` when `source` is absent, empty or not SQLite; `database` when
    ///   `destination` (or its `-wal`, or their `.partial` files) exists already, or the files cannot be copied, or
    ///   kept changing. Nothing of the copy is left on failure.
    public static func snapshot(
        ofStoreAt source: URL, to destination: URL, attempts: Int = 5, fileSystem: any FileSystem = PosixFileSystem()
    ) throws {
        let path = source.path
        guard try holdsDatabase(source, on: fileSystem) else {
            throw StoreError(.notAStore, "\(path) is absent or empty, so not a Folio store")
        }
        func url(_ path: String) -> URL { URL(fileURLWithPath: path, isDirectory: false) }
        let files = [("", true), ("-wal", false)].map { suffix, required in
            (
                from: url(path + suffix), to: url(destination.path + suffix),
                partial: url(destination.path + suffix + ".partial"),
                required: required
            )
        }
        // What is removed on failure must be what this call made.
        for target in files.flatMap({ [$0.to, $0.partial] }) {
            let kind: FileItemKind
            do {
                kind = try fileSystem.itemKind(at: target)
            } catch {
                throw StoreError(.database, "cannot copy \(path) to \(destination.path)", cause: error)
            }
            guard kind == .absent else {
                throw StoreError(.database, "cannot copy \(path) to \(target.path): a file is already there")
            }
        }
        func removePartials() {
            for file in files { try? fileSystem.remove(at: file.partial) }
        }
        for _ in 0..<max(attempts, 1) {
            let before = files.map { identity(of: $0.from, on: fileSystem) }
            let copied = files.indices.filter { files[$0].required || before[$0] != nil }.map { files[$0] }
            do {
                for file in copied { try fileSystem.copyFile(at: file.from, to: file.partial) }
            } catch {
                removePartials()
                throw StoreError(.database, "cannot copy \(path) and its write-ahead log", cause: error)
            }
            guard files.map({ identity(of: $0.from, on: fileSystem) }) == before else {
                removePartials()
                continue
            }
            var linked: [URL] = []
            do {
                for file in copied { try fileSystem.synchronizeFile(at: file.partial) }
                for file in copied.reversed() {
                    try fileSystem.link(file.partial, to: file.to)
                    linked.append(file.to)
                }
                removePartials()
                try fileSystem.synchronizeDirectory(at: destination.deletingLastPathComponent())
            } catch {
                for name in linked.reversed() { try? fileSystem.remove(at: name) }
                removePartials()
                throw StoreError(.database, "cannot write the copy of \(path) to \(destination.path)", cause: error)
            }
            return
        }
        throw StoreError(
            .database,
            "\(path) kept changing while it was copied (\(max(attempts, 1)) attempts); try again when the app using it is idle"
        )
    }

    /// What tells a file's versions apart (size, modification time, file number); `nil` when it cannot be examined.
    private static func identity(of url: URL, on fileSystem: any FileSystem) -> FileAttributes? {
        try? fileSystem.attributes(at: url)
    }
}
