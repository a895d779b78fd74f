import Foundation

extension ChangeLogStore {
    /// Copies the store at `source` (its file and write-ahead log) to `destination`, writing nothing next to
    /// `source`: for tools that look at someone's library without touching it (`folio inspect` opens the copy,
    /// whose opening may recover, record and checkpoint as any opening does).
    ///
    /// The files are copied as they are, and the copy is kept only if neither file changed while it was made (same
    /// size, modification time and inode before and after); otherwise it is made again, up to `attempts` times. A
    /// copy of files that did not change is what a process killed at that instant would have left, which SQLite's
    /// recovery turns into the store as of its last commit, so a library in use by a running app is copied as of
    /// one commit. No SQLite connection is opened on `source`: even a read-only one may create the shared-memory
    /// file beside it.
    ///
    /// - Throws: ``StoreError`` `notAStore` when `source` is absent, empty or not SQLite; `database` when
    ///   `destination` (or its `-wal`) exists already, or the files cannot be copied, or kept changing. The copy is
    ///   removed on failure.
    public static func snapshot(ofStoreAt source: URL, to destination: URL, attempts: Int = 5) throws(StoreError) {
        let path = source.path
        guard try holdsDatabase(path) else {
            throw StoreError(.notAStore, "\(path) is absent or empty, so not a Folio store")
        }
        let files = [("", true), ("-wal", false)].map { suffix, required in
            (from: path + suffix, to: destination.path + suffix, required: required)
        }
        let fileManager = FileManager.default
        // The copy is removed on failure, so it must be a file this call made.
        if let existing = files.first(where: { fileManager.fileExists(atPath: $0.to) }) {
            throw StoreError(.database, "cannot copy \(path) to \(existing.to): a file is already there")
        }
        func removeCopy() {
            for file in files { try? fileManager.removeItem(atPath: file.to) }
        }
        for _ in 0..<max(attempts, 1) {
            let before = files.map { Self.identity(of: $0.from) }
            do {
                for file in files where file.required || fileManager.fileExists(atPath: file.from) {
                    try fileManager.copyItem(atPath: file.from, toPath: file.to)
                }
            } catch {
                removeCopy()
                throw StoreError(.database, "cannot copy \(path) and its write-ahead log", cause: error)
            }
            if files.map({ Self.identity(of: $0.from) }) == before { return }
            removeCopy()
        }
        throw StoreError(.database, "\(path) kept changing while it was copied (\(max(attempts, 1)) attempts); try again when the app using it is idle")
    }

    /// What tells a file's versions apart (size, modification time to the nanosecond, inode); `nil` when absent.
    private static func identity(of path: String) -> [Int]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [Int(status.st_size), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec), Int(status.st_ino)]
    }
}
