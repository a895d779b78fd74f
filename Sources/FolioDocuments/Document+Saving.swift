import FolioCore
import FolioStore
import Foundation

extension Document {
    /// The most changes replayed when opening: past this many since the last checkpoint, a commit takes one.
    static var checkpointInterval: Int { 1_000 }

    /// Commits the open group and writes the document's file through the save pipeline (flat: temporary file,
    /// fsync, rename, fsync of the directory; package: only changed members, manifest last).
    ///
    /// A file changed on disk by another program since the last save is first recorded as a baseline change (its
    /// contents become a version of their own; nothing is silently overwritten).
    ///
    /// - Returns: what the pipeline wrote.
    /// - Throws: ``DocumentError`` `.save` when writing fails: the state gains `.savingError`, every edit stays in
    ///   the log, and the next save rewrites the whole file from it. `.store` when the log fails.
    @discardableResult
    public func save() throws(DocumentError) -> SaveReport {
        try ensureOpen()
        try commit()
        guard !info.isDeleted else { throw DocumentError(.deleted, "\(info.displayName) is deleted; restore it to save it") }
        try noticeExternalModification()
        let url = try fileURL
        let contents = model.contents()
        let report: SaveReport
        do {
            let directory = url.deletingLastPathComponent()
            if try library.fileSystem.itemKind(at: directory) == .absent { try library.fileSystem.createDirectory(at: directory) }
            report = try library.pipeline.save(contents, to: url, incremental: !needsFullRewrite)
        } catch {
            needsFullRewrite = true
            insertState(.savingError)
            throw DocumentError(.save, "could not save \(info.displayName); its edits are safe in the log and the next save rewrites the file", cause: error as? any Error & Sendable)
        }
        needsFullRewrite = false
        let record = SavedFileRecord(
            relativePath: relativePath(of: url), contentsHash: ContentHash(hashing: contents.encoded()),
            size: (try? library.fileSystem.attributes(at: url).size) ?? 0, modificationTime: modificationTime(of: url),
            head: head.hash)
        do {
            try library.store.setLocalState([SavedFileRecord.stateKey: record.encoded()], of: id)
        } catch {
            throw .store(error, "recording the save of \(info.displayName)")
        }
        unsavedChanges = 0
        removeState(.savingError)
        return report
    }

    /// Discards the open group and returns to the last saved state, as a new change (a baseline of what the file
    /// holds), so the discarded edits stay in history.
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the document was never saved, `.save` when its file cannot
    ///   be read, `.invalidContents`, `.store`.
    public func revert() throws(DocumentError) {
        try ensureEditable()
        for operation in group.undoOperations { _ = try? model.apply(operation) }
        group = EditGroup()
        guard let record = try savedRecord(), let contents = try readFile(at: library.root.appendingPathComponent(record.relativePath)) else {
            throw DocumentError(.notFound, "\(info.displayName) has never been saved, so there is nothing to revert to")
        }
        try adopt(contents, madeOn: head)
        unsavedChanges = 0
    }

    /// Records the file's contents as a baseline change when another program changed it since the last save.
    func noticeExternalModification() throws(DocumentError) {
        guard let record = try savedRecord() else { return }
        let url = library.root.appendingPathComponent(record.relativePath)
        guard let attributes = try? library.fileSystem.attributes(at: url) else { return }
        // A flat file whose size and time are as written is unchanged; a package is always checked by content,
        // since editing a member in place changes neither for the package's directory.
        if !type.isPackage && attributes.size == record.size && modificationTime(of: url) == record.modificationTime { return }
        guard let contents = try readFile(at: url), ContentHash(hashing: contents.encoded()) != record.contentsHash else { return }
        // Made on the version that was saved: concurrent with anything done in the app since, so nothing is lost.
        let saved: Change
        do {
            saved = try library.store.change(record.head, of: id) ?? head
        } catch {
            throw .store(error, "reading the saved version")
        }
        try adopt(contents, madeOn: saved)
    }

    /// Appends a baseline of `contents` made on `base` and shows the version every device then shows.
    private func adopt(_ contents: DocumentContents, madeOn base: Change) throws(DocumentError) {
        let loaded: Model
        do {
            loaded = try Model(contents: contents)
        } catch {
            throw DocumentError(.invalidContents, "the file of \(info.displayName) is not a valid \(type.identifier) document: \(error.message)", cause: error)
        }
        let previousHead = head
        head = base
        let change: Change
        do {
            change = try append(.baseline(contents: loaded.contents().encoded()))
        } catch {
            head = previousHead
            throw error
        }
        changesSinceCheckpoint += 1
        let winner = try Self.winningHead(of: id, in: library)
        if winner.hash == change.hash {
            model = loaded
            head = change
        } else {
            head = previousHead
            try refresh()
        }
    }

    private func readFile(at url: URL) throws(DocumentError) -> DocumentContents? {
        do {
            guard try library.fileSystem.itemKind(at: url) != .absent else { return nil }
            return try library.pipeline.read(at: url, isPackage: type.isPackage)
        } catch {
            throw DocumentError(.save, "cannot read the file of \(info.displayName) at \(url.path)", cause: error as? any Error & Sendable)
        }
    }

    func savedRecord() throws(DocumentError) -> SavedFileRecord? {
        do {
            return SavedFileRecord(decoding: try library.store.localState(SavedFileRecord.stateKey, of: id))
        } catch {
            throw .store(error, "reading where \(info.displayName) was saved")
        }
    }

    private func relativePath(of url: URL) -> String {
        let rootPath = library.root.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(rootPath + "/") ? String(path.dropFirst(rootPath.count + 1)) : path
    }

    private func modificationTime(of url: URL) -> Int64 {
        guard let date = try? library.fileSystem.attributes(at: url).modificationDate else { return 0 }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Saves a checkpoint of the current version when many changes were made since the last one, or on close.
    func takeCheckpointIfNeeded(force: Bool) throws(DocumentError) {
        guard changesSinceCheckpoint > 0, force || changesSinceCheckpoint >= Self.checkpointInterval else { return }
        do {
            try library.store.saveCheckpoint(of: id, at: head.vector, contents: modelWithoutGroup().contents().encoded())
        } catch {
            throw .store(error, "saving a checkpoint of \(info.displayName)")
        }
        changesSinceCheckpoint = 0
    }

    /// The state at `head`: the model without the open group's edits.
    private func modelWithoutGroup() -> Model {
        guard !group.isEmpty else { return model }
        var state = model
        for operation in group.undoOperations { _ = try? state.apply(operation) }
        return state
    }
}
