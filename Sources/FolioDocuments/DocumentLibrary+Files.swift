import FolioCore
import FolioStore
import Foundation

extension DocumentLibrary {
    /// Where the document's file lives on this device: in its container's directory, named after the document with
    /// its type's extension (`Documents/Notes.txt`), or with a number when another document's file already has that
    /// name (`Notes 2.txt`): two documents of one name, say made apart on two devices, or a document named
    /// `Notes 2` beside a second `Notes`.
    ///
    /// The file name is made safe from the display name and the type: names and types come from peers too, and are
    /// shown as given, but whatever they hold the file is one visible file directly in the container's directory, its
    /// name at most 255 bytes: `/`, `\` and control characters become `_`, as do leading dots, and a long name is cut
    /// at a character boundary to leave room for the number and the extension.
    ///
    /// Once saved, a document keeps its file name on this device until it is renamed or moved, so that a namesake
    /// arriving from another device never takes its file: file names are this device's own (as the Files app shows
    /// them), not part of the log, and may differ between devices. A deleted document keeps its file name, so that
    /// it gets it back when restored.
    ///
    /// A new name is never that of a file already there: a file Folio did not write (put in the directory by hand,
    /// or by another program) is never overwritten. Two documents are never given one file, even when they are
    /// saved at once: a new name is claimed for its document as it is given, and recorded before the first write.
    /// (The claims live in this library object: two processes that open one library directory at once do not see
    /// each other's.) The numbers go up to ``numberedFileNameLimit``; past it, the name is made from the document's
    /// identity (`Notes 0c2d41f4-….txt`).
    ///
    ///
    /// - Complexity: one read of the document's saved-file record; for a document not saved yet, or renamed or
    ///   moved since, a read of every document's, and a look at the disk per name tried.
    /// - Throws: ``DocumentError`` `.store`; `.save` when the file system cannot say whether a name is free;
    ///   `.alreadyExists` when every numbered name and the one made from the identity are taken.
    public func fileURL(for info: DocumentInfo) async throws(DocumentError) -> URL {
        try await offThePool { () throws(DocumentError) in try self.fileLocation(for: info) }
    }

    /// What ``fileURL(for:)`` returns, worked out on the caller's thread.
    package func fileLocation(for info: DocumentInfo) throws(DocumentError) -> URL {
        let savedPath = try savedFileRecord(of: info.id)?.relativePath
        // A type this process does not know (an app type not registered yet): the extension the file was saved
        // with, so that the file is not renamed for want of the type.
        let savedExtension = savedPath.flatMap { path in
            path.lastIndex(of: ".").map { String(path[path.index(after: $0)...]) }
        }
        let fileExtension =
            types.type(identifier: info.typeIdentifier)?.preferredExtension
            ?? savedExtension ?? info.typeIdentifier.split(separator: ".").last.map(String.init) ?? "data"
        let names = DocumentFileName(displayName: info.displayName, fileExtension: fileExtension)
        let directory = Self.directoryName(of: info.container)
        if let saved = savedPath, let slash = saved.lastIndex(of: "/"),
            saved[..<slash] == directory,
            names.contains(saved[saved.index(after: slash)...], numbers: 2...Self.numberedFileNameLimit, id: info.id)
        {
            return fileURL(named: String(saved[saved.index(after: slash)...]), in: info.container)
        }
        // A name no other document's file has or was given on this device, and no file Folio did not write has
        // (one the person put there, say), claimed at once.
        let saved = try savedRelativePaths().compactMap { $0.document == info.id ? nil : $0.path }
        let fileName = try fileNameClaims.withLock { claims throws(DocumentError) -> String in
            // Claims are never dropped: one whose record was written after `saved` was read must still count.
            var taken = Set(saved)
            for (document, path) in claims where document != info.id { taken.insert(path) }
            let limit = Self.numberedFileNameLimit
            for number in 1...limit + 1 {
                let fileName = number > limit ? names.fallback(for: info.id) : names.candidate(number: number)
                guard !taken.contains("\(directory)/\(fileName)") else { continue }
                let url = fileURL(named: fileName, in: info.container)
                let kind: FileItemKind
                do {
                    kind = try fileSystem.itemKind(at: url)
                } catch {
                    throw DocumentError(
                        .save, "cannot tell whether \(url.path) is free for \(info.displayName)", cause: error)
                }
                if kind == .absent {
                    claims[info.id] = "\(directory)/\(fileName)"
                    return fileName
                }
            }
            throw DocumentError(
                .alreadyExists,
                "no free file name for \(info.displayName) in \(directory): \(names.candidate(number: 1)), its "
                    + "numbers up to \(Self.numberedFileNameLimit) and \(names.fallback(for: info.id)) are all taken")
        }
        return fileURL(named: fileName, in: info.container)
    }

    /// How many numbered file names (`Notes.txt`, `Notes 2.txt`, …) ``fileURL(for:)`` tries before the one made
    /// from the document's identity: choosing a name looks at the disk for each, under a lock.
    public static let numberedFileNameLimit = 1_000

    /// Where this device saved each document (the files ``fileURL(for:)`` gave them), in the order of their
    /// identities; a document never saved here is absent. A first save records its file before writing it, so a
    /// file listed may not exist yet (the save is under way, failed or was cut off). No two documents have one file.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func savedFiles() async throws(DocumentError) -> [(document: DocumentID, url: URL)] {
        try await offThePool { () throws(DocumentError) in try self.savedFileURLs() }
    }

    /// What ``savedFiles()`` returns, read on the caller's thread.
    package func savedFileURLs() throws(DocumentError) -> [(document: DocumentID, url: URL)] {
        try savedRelativePaths().map { ($0.document, url(ofRelativePath: $0.path)) }
    }

    /// Every document's saved-file path relative to the root, in the order of their identities.
    private func savedRelativePaths() throws(DocumentError) -> [(document: DocumentID, path: String)] {
        do {
            return try localState.values(SavedFileRecord.stateKey).compactMap { entry in
                SavedFileRecord(decoding: entry.value).map { (entry.document, $0.relativePath) }
            }
        } catch {
            throw .store(error, "reading where the documents are saved")
        }
    }

    /// The URL of the file `fileName` in `container`, made once: every save and file check asks for it.
    func fileURL(named fileName: String, in container: DocumentContainer) -> URL {
        let key = FileKey(container: container, name: fileName)
        if let known = fileURLs.withLock({ $0[key] }) { return known }
        // No directory hint would make Foundation look at the disk: a package's URL has no trailing slash either way.
        let url = directory(of: container).appendingPathComponent(fileName, isDirectory: false)
        fileURLs.withLock { cache in
            if cache.count >= 1_024 { cache.removeAll() }
            cache[key] = url
        }
        return url
    }

    /// Where this device last wrote the document, if it did.
    func savedFileRecord(of id: DocumentID) throws(DocumentError) -> SavedFileRecord? {
        do {
            return SavedFileRecord(decoding: try localState.value(SavedFileRecord.stateKey, of: id))
        } catch {
            throw .store(error, "reading where document \(id) was saved")
        }
    }

    /// Makes the document's file on this device follow what the log says of it: moved to its new name or
    /// container after a rename or a move, removed after a delete, wherever they were made. A sync calls it for
    /// the documents it updated, an open document when it picks up a change, a save before it writes.
    ///
    /// Only a file this device wrote is touched; a deleted document's file that another program changed since is
    /// left where it is, so that nothing made outside Folio is lost.
    ///
    /// - Throws: ``DocumentError`` `.save` when the file cannot be moved or removed (it follows at the next save),
    ///   `.store`.
    public func updateFile(of id: DocumentID) async throws(DocumentError) {
        try await offThePool { () throws(DocumentError) in try self.followFile(of: id) }
    }

    /// What ``updateFile(of:)`` does, on the caller's thread.
    package func followFile(of id: DocumentID) throws(DocumentError) {
        guard let record = try savedFileRecord(of: id), let info = try catalogInfo(of: id) else { return }
        let savedURL = url(ofRelativePath: record.relativePath)
        do {
            if info.isDeleted {
                if try isUnchanged(savedURL, since: record) { try fileSystem.remove(at: savedURL) }
            } else {
                try moveFile(of: id, from: savedURL, to: try fileLocation(for: info))
            }
        } catch let error as DocumentError {
            throw error
        } catch {
            throw DocumentError(
                .save,
                "the file of \(info.displayName) could not follow its \(info.isDeleted ? "deletion" : "new name or place")",
                cause: error)
        }
    }

    /// Whether the file or package at `url` holds what this device last wrote there.
    private func isUnchanged(_ url: URL, since record: SavedFileRecord) throws -> Bool {
        let contents: DocumentContents
        switch try fileSystem.itemKind(at: url) {
        case .file: contents = .data(try pipeline.readFlat(at: url))
        case .directory: contents = .package(try pipeline.readPackage(at: url, verifyingManifest: false))
        default: return false
        }
        return ContentHash(hashing: contents.encoded()) == record.contentsHash
    }

    /// Moves the document's file from `oldURL` to `newURL` (a rename or a move, made here or on another device),
    /// when it is there and nothing is at `newURL`; the saved-file record follows it, so that a change another
    /// program makes to it is still noticed.
    ///
    /// - Throws: `FileSystemError` and `StoreError`, as they come.
    func moveFile(of id: DocumentID, from oldURL: URL, to newURL: URL) throws {
        try fileMoves.withLock { _ in
            guard oldURL != newURL, try fileSystem.itemKind(at: oldURL) != .absent,
                try fileSystem.itemKind(at: newURL) == .absent
            else { return }
            let directory = newURL.deletingLastPathComponent()
            try fileSystem.createDirectoryDurably(at: directory)
            try fileSystem.rename(oldURL, to: newURL)
            try fileSystem.synchronizeDirectory(at: directory)
            if var record = SavedFileRecord(decoding: try localState.value(SavedFileRecord.stateKey, of: id)) {
                record.relativePath = relativePath(of: newURL)
                try localState.set([SavedFileRecord.stateKey: record.encoded()], of: id)
            }
        }
    }
}
