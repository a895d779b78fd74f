import Foundation

extension SavePipeline {
    /// Saves `data` as the flat file at `url`, atomically and durably.
    ///
    /// The steps: write a temporary file in the same directory (`.Name.folio-tmp`), fsync it, rename it over `url`,
    /// fsync the directory. A crash before the rename leaves the previous file (and a leftover that
    /// ``recoverFlat(at:)`` removes); after it, the new one. On a failure the temporary file is removed when
    /// possible, and the save fails: a failed fsync means the bytes may not be on disk, so the caller must not
    /// report the document as saved.
    ///
    /// - Throws: ``SaveError`` naming the step and the file: `writeFailed`, `syncFailed`, `renameFailed`,
    ///   `noSpace`, `permissionDenied`, or `crashed` from a fault-injecting file system.
    public func saveFlat(_ data: Data, to url: URL) throws {
        let name = url.lastPathComponent
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(Self.temporaryName(for: name), isDirectory: false)
        let action = "save \(name)"
        do throws(SaveError) {
            try writeAndSync(data, to: temporary, "the temporary file", in: action)
            try rename(temporary, to: url, "renaming the temporary file over it", in: action)
        } catch {
            removeQuietly(temporary)
            throw error
        }
        try syncDirectory(directory, "its directory", in: action)
    }

    /// Reads the flat file at `url`, after removing a leftover of an interrupted save unless `recovering` is false
    /// (for a file that is not this library's, which is only read).
    ///
    /// - Throws: ``SaveError`` `notFound`, `readFailed`, or `unsafePackage` when a link or special file is there.
    public func readFlat(at url: URL, recovering: Bool = true) throws -> Data {
        if recovering { try recoverFlat(at: url) }
        let action = "read \(url.lastPathComponent)"
        do {
            return try fileSystem.contents(of: url)
        } catch let error as FileSystemError where error.code == .notFound {
            throw SaveError(
                .notFound, "could not \(action): there is no file at '\(PosixFileSystem.path(of: url))'", cause: error)
        } catch {
            throw SaveError(error, action: action, step: "reading the file", stepCode: .readFailed)
        }
    }

    /// Removes what an interrupted flat save left next to `url` (its temporary file).
    ///
    /// - Throws: ``SaveError`` when the leftover exists but cannot be removed.
    public func recoverFlat(at url: URL) throws(SaveError) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(Self.temporaryName(for: url.lastPathComponent), isDirectory: false)
        let action = "recover \(url.lastPathComponent)"
        let kind = try step(action, "examining the temporary file", .readFailed) {
            try fileSystem.itemKind(at: temporary)
        }
        guard kind != .absent else { return }
        try step(action, "removing the leftover temporary file", .writeFailed) {
            try fileSystem.remove(at: temporary)
        }
    }
}
