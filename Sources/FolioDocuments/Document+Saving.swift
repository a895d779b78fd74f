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
    ///   the log, and the next save rewrites the whole file from it. `.invalidContents` (with `.savingError`) when
    ///   another program left a file the model cannot load, which is not overwritten. `.deleted`, `.store` when
    ///   the log fails.
    @discardableResult
    public func save() throws(DocumentError) -> SaveReport {
        try ensureOpen()
        try commit()
        try reloadInfo()
        guard !info.isDeleted else {
            throw DocumentError(.deleted, "\(info.displayName) is deleted; restore it to save it")
        }
        do {
            try noticeExternalModification()
        } catch  where error.code == .save || error.code == .invalidContents {
            // The file on disk cannot be read or loaded: it is not overwritten, and the save fails.
            insertState(.savingError)
            throw error
        }
        let url = try fileURL
        // Renamed, moved or restored since the last save (here or on another device): the file follows.
        let record = try savedRecord()
        let previousURL = record.map { library.url(ofRelativePath: $0.relativePath) }.flatMap { $0 == url ? nil : $0 }
        if let previousURL {
            do { try library.moveFile(of: id, from: previousURL, to: url) } catch { saving.needsFullRewrite = true }
        }
        let contents = model.contents()
        // A member whose blob has not arrived is not written as its placeholder: the file waits for it (the log
        // holds everything meanwhile).
        guard Self.unavailableMembers(of: contents).isEmpty else { return SaveReport() }
        let hash = ContentHash(hashing: contents.encoded())
        // The first write to a file is recorded before it is made: a crash between the write and the record would
        // otherwise leave the file looking like another program's, and the next save would leave it for a new name.
        let recorded = previousURL == nil ? record : try savedRecord()  // a move updates the record
        if recorded?.relativePath != library.relativePath(of: url) {
            try recordFile(at: url, hash: hash)
        }
        let report: SaveReport
        do {
            let directory = url.deletingLastPathComponent()
            try library.fileSystem.createDirectoryDurably(at: directory)
            report = try library.pipeline.save(contents, to: url, incremental: !saving.needsFullRewrite)
        } catch {
            saving.needsFullRewrite = true
            insertState(.savingError)
            throw DocumentError(
                .save,
                "could not save \(info.displayName); its edits are safe in the log and the next save rewrites the file",
                cause: error)
        }
        saving.needsFullRewrite = false
        try recordFile(at: url, hash: hash)
        // A previous file that could not be moved is an older version of this one: nothing else claims it.
        if let previousURL, (try? library.fileSystem.itemKind(at: previousURL)) != .absent {
            try? library.fileSystem.remove(at: previousURL)
        }
        saving.unsavedChanges = 0
        removeState(.savingError)
        // The history indexes the log: a version that cannot be recorded loses no change, and the save stands.
        try? recordVersion(.saved)
        return report
    }

    /// Discards the open group and returns to the last saved state, as a new change (a baseline of what the file
    /// holds), so the discarded edits stay in history.
    ///
    /// - Throws: ``DocumentError`` `.notFound` when the document was never saved, `.save` when its file cannot
    ///   be read, `.invalidContents`, `.store`.
    public func revert() throws(DocumentError) {
        try ensureEditable()
        guard let record = try savedRecord(),
            let contents = try readFile(at: library.url(ofRelativePath: record.relativePath))
        else {
            throw DocumentError(.notFound, "\(info.displayName) has never been saved, so there is nothing to revert to")
        }
        // The open group's edits not yet committed are dropped only once the revert is sure to happen: a failed
        // revert changes nothing. Those committed already (while the library synced live) stay in the log, and the
        // revert's change takes them back as it does the earlier ones.
        let (openModel, openEditing) = (model, editing)
        // A selection waiting for edits that are thrown away was made in their text.
        presenceTracking.waiting = nil
        for operation in editing.group.uncommittedUndoOperations { _ = try? model.apply(operation) }
        editing.committed(with: editing.history, at: library.clock.now())
        do {
            try adopt(contents, madeOn: head)
        } catch {
            (model, editing) = (openModel, openEditing)
            throw error
        }
        saving.unsavedChanges = 0
    }

    /// Cleans what an interrupted save left at the document's file: a temporary file, or a package save to finish
    /// (after its commit point) or to discard (before it).
    func recoverInterruptedSave() throws(DocumentError) {
        let url = try fileURL
        do {
            if type.isPackage {
                try library.pipeline.recoverPackage(at: url)
            } else {
                try library.pipeline.recoverFlat(at: url)
            }
        } catch {
            throw DocumentError(
                .save, "could not clean up after an interrupted save of \(info.displayName)", cause: error)
        }
    }

    /// Records the file's contents as a baseline change when another program changed it since the last save.
    func noticeExternalModification() throws(DocumentError) {
        guard let record = try savedRecord() else { return }
        let url = library.url(ofRelativePath: record.relativePath)
        guard let attributes = try? library.fileSystem.attributes(at: url) else { return }
        // A flat file whose size and time are as written is unchanged, unless it was written so lately that another
        // write in the same timestamp tick would look the same ("racily clean", as git calls it); a package is
        // always checked by content, since editing a member in place changes neither for the package's directory.
        if !type.isPackage && attributes.size == record.size
            && Self.milliseconds(attributes.modificationDate) == record.modificationTime
            && !Self.isRacilyClean(recordedTime: record.modificationTime, now: library.fileSystem.currentTime())
        {
            return
        }
        guard let contents = try readFile(at: url) else { return }
        let hash = ContentHash(hashing: contents.encoded())
        guard hash != record.contentsHash else { return }
        // A save that failed or crashed after its rename left the version the document shows: its own file, which
        // only the record has not caught up with.
        if hash == ContentHash(hashing: model.contents().encoded()) {
            try recordFile(at: url, holding: contents)
            return
        }
        // Made on the version that was saved, by this device's identity for other programs (a device's own changes
        // form one line, so only another identity can be concurrent with the edits made in the app since): both
        // versions stay, nothing is lost.
        let saved: Change
        do {
            saved = try library.store.change(record.head, of: id) ?? head
        } catch {
            throw .store(error, "reading the saved version")
        }
        // Made on what the file held: the version saved, merged with the heads it showed merged then (those still in
        // the log).
        var merged: [ChangeHash] = []
        for hash in record.merged {
            let found: Change?
            do { found = try library.store.change(hash, of: id) } catch {
                throw .store(error, "reading the saved version")
            }
            if found != nil { merged.append(hash) }
        }
        // Once adopted, the file is what the document shows: it is noticed once, not at every open.
        if try adopt(contents, madeOn: saved, mergedWith: merged, author: library.externalDevice) {
            try recordFile(at: url, holding: contents)
        }
    }

    /// Remembers that the file at `url` holds `contents`, the version at `head`, so that a later change made by
    /// another program can be told from it.
    private func recordFile(at url: URL, holding contents: DocumentContents) throws(DocumentError) {
        try recordFile(at: url, hash: ContentHash(hashing: contents.encoded()))
    }

    /// Remembers that the file at `url` holds (or is about to hold) the contents hashed `hash`, the version at `head`.
    private func recordFile(at url: URL, hash: ContentHash) throws(DocumentError) {
        let record = SavedFileRecord(
            relativePath: library.relativePath(of: url), contentsHash: hash,
            size: (try? library.fileSystem.attributes(at: url).size) ?? 0, modificationTime: modificationTime(of: url),
            head: head.hash, merged: tracking.mergeShown(at: head.hash)?.others ?? [])
        do {
            try library.localState.set([SavedFileRecord.stateKey: record.encoded()], of: id)
        } catch {
            throw .store(error, "recording the save of \(info.displayName)")
        }
    }

    /// Appends a baseline of `contents` made on `base` and shows the version every device then shows.
    ///
    /// The undo history is cleared in the same transaction: its steps describe the model before the baseline and
    /// would not apply to it (or worse, would apply to the wrong text).
    ///
    /// - Returns: whether the document now shows `contents` (the baseline is the winning version).
    @discardableResult
    func adopt(
        _ contents: DocumentContents, madeOn base: Change, mergedWith merged: [ChangeHash]? = nil,
        author: Device? = nil
    ) throws(DocumentError) -> Bool {
        let loaded: Model
        do {
            loaded = try Model(contents: contents)
        } catch {
            throw DocumentError(
                .invalidContents, "the file of \(info.displayName) is not a valid \(type.identifier) document",
                cause: error)
        }
        let previousHead = head
        head = base
        let change: Change
        do {
            change = try append(
                library.baselineKind(loaded.contents(), of: Model.self), author: author, mergedWith: merged
            ) { _ in
                UndoHistory()
            }
        } catch {
            head = previousHead
            throw error
        }
        editing.history = UndoHistory()
        saving.changesSinceCheckpoint += 1
        let winner = try library.winningHead(of: id)
        if winner.hash == change.hash {
            model = loaded
            head = change
            // The edits made in the app since the saved version compete with the file: the conflict shows now.
            try settleVersions()
            // A selection waiting for its commit was made in the text the file replaced.
            presenceTracking.waiting = nil
            placePresence()
            return true
        }
        head = previousHead
        try refresh()
        return false
    }

    private func readFile(at url: URL) throws(DocumentError) -> DocumentContents? {
        do {
            guard try library.fileSystem.itemKind(at: url) != .absent else { return nil }
            // Another program may have edited a package's members in place: they are read as they are.
            return type.isPackage
                ? .package(try library.pipeline.readPackage(at: url, verifyingManifest: false))
                : .data(try library.pipeline.readFlat(at: url))
        } catch {
            throw DocumentError(.save, "cannot read the file of \(info.displayName) at \(url.path)", cause: error)
        }
    }

    func savedRecord() throws(DocumentError) -> SavedFileRecord? {
        try library.savedFileRecord(of: id)
    }

    private func modificationTime(of url: URL) -> Int64 {
        guard let date = try? library.fileSystem.attributes(at: url).modificationDate else { return 0 }
        return Self.milliseconds(date)
    }

    /// A file time as the saved-file record keeps it, in milliseconds.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Whether a file recorded with modification time `recordedTime` (milliseconds) was written so shortly before
    /// `now` that a later write could have left the same time (file systems stamp times at a coarse tick, and the
    /// record keeps milliseconds): then only its contents tell whether it changed.
    static func isRacilyClean(recordedTime: Int64, now: Date) -> Bool {
        milliseconds(now) - recordedTime < 2_000
    }

    /// Saves a checkpoint of the current version when many changes were made since the last one, or on close.
    func takeCheckpointIfNeeded(force: Bool) throws(DocumentError) {
        guard saving.checkpointIsDue(force: force, interval: Self.checkpointInterval) else { return }
        do {
            try library.store.checkpoints.save(
                of: id, at: head.vector, contents: stateAtHead().contents().encoded())
        } catch {
            throw .store(error, "saving a checkpoint of \(info.displayName)")
        }
        saving.changesSinceCheckpoint = 0
    }

    /// The state at `head`: the model without the open group's edits.
    func modelWithoutGroup() -> Model {
        editing.withoutOpenGroup(model)
    }
}
