import FolioCore
import FolioFiles
import FolioStore
import Foundation

/// Syncs stores through a shared directory of real files: two libraries on one machine (in two processes at once,
/// or never at the same time), or a folder that a file-sync service copies between machines.
///
/// Layout:
/// ```
/// <root>/folio-sync-folder                         the folder's identity (written once)
/// <root>/<device>/<document>/<first>-<last>.changes   batches of changes, immutable (see below)
/// <root>/blobs/<sha-256 hex>                       the blobs changes refer to, by content (FolderTransport+Blobs)
/// ```
/// Each device writes only under its own directory, and only new files: a batch is written to a temporary file
/// (`.tmp-…`, which readers ignore), flushed, then linked to its final name, which never replaces an existing
/// file; so no file is modified in place and no reader sees a partial file. A batch file ends with a SHA-256 of its
/// contents, so a damaged file is refused (and reported) rather than ingested.
///
/// A sync reads first, then writes:
/// - **read**: for every other device's directory and document, the batches not read yet, in order. Progress is a
///   sync cursor per (device, document): the vector in the last batch read, whose change count names the next file
///   (see the batch numbering in the file format). Changes are ingested, so duplicates and order do not matter.
///   This device's own directory is read too for a document whose local copy it removed, until its changes there
///   are back (`ChangeLogStore.removeLocalCopy(of:)`).
/// - **write**: per document, the changes the folder lacks: the store's changes beyond what this device has put
///   there (its own cursor, checked against its newest file) and beyond what it has read from the others. A change
///   therefore lands in the folder about once, and a reader's cost grows with what it lacks, not with the history.
///
/// Anyone who can write to the folder can put files in it, so what a file claims is checked before it counts:
/// what the folder holds, as far as writing is concerned, is what this device put there and the changes it has
/// read there itself (per device, the highest sequence number read, kept in a cursor of its own), never a file's
/// export vector, which only numbers its writer's files. A change a file holds that the store refuses is skipped
/// and reported; the rest of the file and the sync go on. A file whose counts or vector could not be real is
/// skipped and reported.
///
/// Cursors are kept per folder (by the folder's identity), so a store can sync with several folders.
///
/// The store's unpublished documents (`UnpublishedDocuments.documents()`, read once per call) take no part:
/// nothing of them is written to the folder, and the other devices' files of them are not read (their cursors stay,
/// so that they are read once the document is published again).
public struct FolderTransport: SyncTransport {
    /// The shared directory.
    public let root: URL
    /// At most this many changes per batch file.
    public let changesPerFile: Int
    /// At most this many bytes of changes per batch file, unless one change alone is larger (it then has a file of
    /// its own). Readers refuse a file above 1 GiB, and a change is at most 600 MiB: with the default of 512 MiB,
    /// every file is readable.
    public let bytesPerFile: Int
    let identifiers: any IdentifierSource
    /// The folder's files, through the injected file system.
    let files: FolderFiles

    static let identityFileName = "folio-sync-folder"
    static let identityHeader = "folio sync folder 1"

    /// Uses the directory at `root` (created when absent; its parent must exist).
    ///
    /// - Parameters:
    ///   - root: the shared directory.
    ///   - changesPerFile: the largest batch file, in changes.
    ///   - bytesPerFile: the largest batch file, in bytes of changes (a larger change has a file of its own); by
    ///     default 512 MiB, half of what readers accept.
    ///   - identifiers: where the folder's identity and temporary file names come from.
    ///   - fileSystem: every file call the folder makes (inject a fault-injecting one to test failures).
    public init(
        root: URL, changesPerFile: Int = 2048, bytesPerFile: Int = 512 << 20,
        identifiers: any IdentifierSource = RandomIdentifierSource(), fileSystem: any FileSystem = PosixFileSystem()
    ) {
        precondition(changesPerFile > 0, "a batch holds at least one change")
        precondition(bytesPerFile <= FolderFiles.sizeLimit / 2, "readers refuse files above 1 GiB")
        self.root = root
        self.changesPerFile = changesPerFile
        self.bytesPerFile = bytesPerFile
        self.identifiers = identifiers
        files = FolderFiles(fileSystem: fileSystem)
    }

    /// Reads what the other devices put in the folder, then writes what the folder lacks.
    ///
    /// The report is complete when every file could be read; an unreadable one is described in its problems and
    /// read again next time.
    ///
    /// - Throws: ``SyncError`` `store` when the store fails, `io` when the folder cannot be read or written,
    ///   `malformed` when the folder's identity file is damaged.
    public func sync(_ store: ChangeLogStore) throws -> SyncReport {
        var report = SyncReport()
        let folder = try identity()
        var names = try DeviceNames(store)
        let unpublished = try unpublishedDocuments(of: store)
        let contents = try read(into: store, folder: folder, skipping: unpublished, names: &names, report: &report)
        try readBlobs(into: store, report: &report)
        try write(
            from: store, folder: folder, skipping: unpublished, contents: contents, names: names, report: &report)
        report.isComplete = report.problems.isEmpty
        if report.isComplete { report.caughtUpDocuments = contents.keys.sorted() }
        return report
    }

    /// Reads what the other devices put in the folder and is new to `store`.
    ///
    /// - Throws: ``SyncError``, as ``sync(_:)``.
    public func receive(into store: ChangeLogStore) throws -> SyncReport {
        var report = SyncReport()
        var names = try DeviceNames(store)
        let contents = try read(
            into: store, folder: try identity(), skipping: try unpublishedDocuments(of: store), names: &names,
            report: &report)
        try readBlobs(into: store, report: &report)
        report.isComplete = report.problems.isEmpty
        if report.isComplete { report.caughtUpDocuments = contents.keys.sorted() }
        return report
    }

    /// Writes the changes of `store` that the folder lacks, as far as `store` knows from its cursors.
    ///
    /// - Throws: ``SyncError``, as ``sync(_:)``.
    public func send(from store: ChangeLogStore) throws -> SyncReport {
        var report = SyncReport()
        let folder = try identity()
        try write(
            from: store, folder: folder, skipping: try unpublishedDocuments(of: store), contents: [:],
            names: try DeviceNames(store), report: &report)
        report.isComplete = report.problems.isEmpty
        return report
    }

    /// The documents `store` keeps to itself.
    private func unpublishedDocuments(of store: ChangeLogStore) throws(SyncError) -> Set<DocumentID> {
        do {
            return try store.unpublished.documents()
        } catch {
            throw .store(error, while: "reading the documents kept off the folder")
        }
    }

    // MARK: Reading

    /// Reads what the other devices put in the folder, but for the documents in `unpublished`, and this device's
    /// own files of the documents whose local copy it removed while its changes there are not back
    /// (`ChangeLogStore.documentsAwaitingOwnChanges()`): the folder is where they are. Returns, per document, the
    /// changes read there so far (see ``readContents(of:folder:in:)``).
    private func read(
        into store: ChangeLogStore, folder: UUIDBytes, skipping unpublished: Set<DocumentID>,
        names: inout DeviceNames, report: inout SyncReport
    ) throws(SyncError) -> [DocumentID: VersionVector] {
        var contents: [DocumentID: VersionVector] = [:]
        let own = store.localDevice.id
        let awaiting: Set<DocumentID>
        do {
            awaiting = Set(try store.documentsAwaitingOwnChanges())
        } catch {
            throw .store(error, while: "listing the documents whose own changes are to come back")
        }
        for writer in try writers() where writer != own || !awaiting.isEmpty {
            for document in try documents(of: writer)
            where !unpublished.contains(document) && (writer != own || awaiting.contains(document)) {
                if contents[document] == nil {
                    contents[document] = try readContents(of: document, folder: folder, in: store)
                }
                try read(
                    writer, document, into: store, folder: folder, contents: &contents[document]!, names: &names,
                    report: &report)
            }
        }
        return contents
    }

    /// Reads one writer's new batches of one document, adding the changes read to `contents`.
    private func read(
        _ writer: DeviceID, _ document: DocumentID, into store: ChangeLogStore, folder: UUIDBytes,
        contents: inout VersionVector, names: inout DeviceNames, report: inout SyncReport
    ) throws(SyncError) {
        var cursor = try cursor(of: writer, document: document, folder: folder, in: store)
        let directory = path(writer, document)
        let batchFiles = try files.names(in: directory).compactMap { name in
            FolderBatch.range(ofFileName: name).map { (name: name, first: $0.first, last: $0.last) }
        }
        .filter { $0.last > cursor.changeCount }
        .sorted { ($0.first, $0.last) < ($1.first, $1.last) }
        // The cursor moves only over consecutive files: past a missing or unreadable one, later files are still
        // ingested (their changes wait for the missing ones if need be), and read again next time.
        var consecutive = true
        for file in batchFiles {
            let location = directory + "/" + file.name
            let batch: FolderBatch
            do {
                batch = try FolderBatch(decoding: files.contents(of: location))
            } catch {
                report.messagesRejected += 1
                report.problems.append("\(location) was skipped: \(error)")
                consecutive = false
                continue
            }
            guard batch.writer.id == writer, batch.document == document, batch.first == file.first,
                batch.last == file.last
            else {
                report.messagesRejected += 1
                report.problems.append(
                    "\(location) was skipped: it holds counts \(batch.first)-\(batch.last) of device \(batch.writer.id), document \(batch.document)"
                )
                consecutive = false
                continue
            }
            report.messagesReceived += 1
            report.changesReceived += batch.changes.count
            try names.learn(batch.devices + [batch.writer], speaker: batch.writer.id, into: store)
            let (results, refused) = try ingest(
                batch.changes, heads: batch.heads, from: location, into: store, report: &report)
            for result in results {
                report.changesApplied += result.applied.count
                report.duplicates += result.duplicates
                if !result.applied.isEmpty { report.noteUpdated(document) }
                for (id, reason) in result.rejected {
                    report.problems.append("\(location): change \(id) was refused: \(reason)")
                }
                for (id, reason) in result.refusedHeads {
                    report.problems.append("\(location): the head of \(id) was refused: \(reason)")
                }
            }
            // Only what the log now holds counts as read: not a refused change, nor one still waiting.
            let logged: VersionVector
            do {
                logged = try store.vector(of: document)
            } catch {
                throw .store(error, while: "reading the vector of document \(document)")
            }
            for change in batch.changes where logged.contains(change.change.id) && !refused.contains(change.change.id) {
                contents.include(change.change.id)
            }
            let turnedAway = results.reduce(0) { $0 + $1.turnedAway.count }
            if turnedAway > 0 {
                // The store had no room for changes that arrived early: the file is read again next time.
                consecutive = false
                report.problems.append(
                    "\(location): \(turnedAway) changes that arrived early were turned away (too many wait); it will be read again"
                )
            }
            if consecutive, file.first - 1 <= cursor.changeCount {
                cursor.merge(batch.vector)
                do {
                    try store.syncCursors.set(cursor, cursorKey(writer, folder: folder), of: document)
                    try store.syncCursors.set(contents, contentsKey(folder: folder), of: document)
                } catch {
                    throw .store(error, while: "recording the progress through \(location)")
                }
            } else if consecutive {
                consecutive = false
                report.problems.append(
                    "\(directory) lacks the batches from count \(cursor.changeCount + 1) to \(file.first - 1); later ones were read and will be read again"
                )
            }
        }
    }

    /// Ingests a file's changes together; when the store refuses them (one is invalid, or reuses an identity), one
    /// at a time, so that one bad change skips itself, reported, and neither the rest of the file nor the sync.
    private func ingest(
        _ changes: [EncodedChange], heads: [SignedHead], from location: String, into store: ChangeLogStore,
        report: inout SyncReport
    ) throws(SyncError) -> (results: [IngestResult], refused: Set<ChangeID>) {
        do {
            return ([try store.ingest(encoded: changes, heads: heads)], [])
        } catch  where error.code == .invalidChange || error.code == .integrity {
            var results: [IngestResult] = []
            var refused: Set<ChangeID> = []
            for change in changes {
                do {
                    results.append(try store.ingest(encoded: [change], heads: heads))
                } catch  where error.code == .invalidChange || error.code == .integrity {
                    refused.insert(change.change.id)
                    report.problems.append("\(location): change \(change.change.id) was refused: \(error.message)")
                } catch {
                    throw .store(error, while: "ingesting \(location)")
                }
            }
            return (results, refused)
        } catch {
            throw .store(error, while: "ingesting \(location)")
        }
    }

    /// The changes of `document` this device has read in the folder: per device, the highest sequence number found
    /// in the files read (every change's predecessors are in the folder too, unless someone removed them).
    private func readContents(of document: DocumentID, folder: UUIDBytes, in store: ChangeLogStore) throws(SyncError)
        -> VersionVector
    {
        do {
            return try store.syncCursors.vector(contentsKey(folder: folder), of: document)
        } catch {
            throw .store(error, while: "reading what was read of document \(document) in the folder")
        }
    }

    // MARK: Writing

    /// Writes, per document but those in `unpublished`, the changes the folder lacks.
    private func write(
        from store: ChangeLogStore, folder: UUIDBytes, skipping unpublished: Set<DocumentID>,
        contents: [DocumentID: VersionVector], names: DeviceNames, report: inout SyncReport
    ) throws(SyncError) {
        let own = store.localDevice
        let documents: [DocumentID]
        do {
            documents = try store.documents()
        } catch {
            throw .store(error, while: "listing the documents to write to the folder")
        }
        for document in documents where !unpublished.contains(document) {
            let vector: VersionVector
            do {
                vector = try store.vector(of: document)
            } catch {
                throw .store(error, while: "reading the vector of document \(document)")
            }
            if vector.isEmpty { continue }
            guard var exported = try exportedVector(of: document, in: store, folder: folder, report: &report) else {
                continue
            }
            var read = VersionVector()
            if let known = contents[document] {
                read = known
            } else {
                read = try readContents(of: document, folder: folder, in: store)
            }
            let known = exported.merging(read)
            if vector.isContained(in: known) { continue }
            let missing: [Change]
            var partHeads: PartHeads
            do {
                missing = try store.changes(of: document, since: known)
                partHeads = PartHeads(
                    kept: try store.signedHeads(of: document, since: known, signingOwn: false), reply: missing)
            } catch {
                throw .store(error, while: "reading the changes of document \(document) the folder lacks")
            }
            let directory = path(own.id, document)
            try files.ensureDirectory(root.path + "/" + own.id.description)
            try files.ensureDirectory(directory)
            let encoded = missing.map(EncodedChange.init)
            var start = 0
            while start < missing.count {
                // At most `changesPerFile` changes and `bytesPerFile` bytes, and at least one change.
                var end = start + 1
                var bytes = encoded[start].bytes.count
                while end < missing.count, end - start < changesPerFile,
                    bytes + encoded[end].bytes.count <= bytesPerFile
                {
                    bytes += encoded[end].bytes.count
                    end += 1
                }
                let chunk = missing[start..<end]
                let chunkEncoded = Array(encoded[start..<end])
                start = end
                var next = exported
                for change in chunk { next.merge(change.vector) }
                // Whatever else the store has is in the folder already (in `known`).
                if start == missing.count { next.merge(vector) }
                let batch = FolderBatch(
                    writer: own, document: document, first: exported.changeCount + 1, last: next.changeCount,
                    vector: next, devices: names.announced, changes: chunkEncoded,
                    heads: partHeads.next(chunk, sign: { store.signedHead(for: $0) }))
                // A name already taken by a file of this device was published by another of its processes, from the
                // same log and the same cursor: the same counts mean the same vector, so that file stands for this
                // one. A file there that this device did not sign is someone else's, and is replaced.
                // The blobs its changes refer to go first: a reader that finds the batch finds them.
                try writeBlobs(of: chunk, from: store, report: &report)
                if try files.publish(
                    batch.encoded(signedWith: store.key), as: batch.fileName, in: directory,
                    temporaryName: "\(own.id)-\(identifiers.next())", keepingExisting: { isOwnFile($0, of: own.id) })
                {
                    report.messagesSent += 1
                    report.changesSent += chunk.count
                }
                exported = next
                do {
                    try store.syncCursors.set(exported, cursorKey(own.id, folder: folder), of: document)
                } catch {
                    throw .store(error, while: "recording what was written to \(directory)")
                }
            }
        }
    }

    /// What this device has put in the folder for `document`: its cursor, unless its newest file there says more
    /// (the cursor was not saved after a crash). Only files this device signed count: one it did not sign is
    /// someone else's, reported and passed over; one that names changes the log lacks was not written from this log.
    private func exportedVector(
        of document: DocumentID, in store: ChangeLogStore, folder: UUIDBytes, report: inout SyncReport
    ) throws(SyncError) -> VersionVector? {
        let own = store.localDevice.id
        let saved = try cursor(of: own, document: document, folder: folder, in: store)
        let directory = path(own, document)
        let batchFiles = try files.names(in: directory).compactMap { name in
            FolderBatch.range(ofFileName: name).map { (name: name, first: $0.first, last: $0.last) }
        }
        .filter { $0.last >= saved.changeCount }
        .sorted { ($0.last, $0.first) > ($1.last, $1.first) }
        var logged: VersionVector?
        for file in batchFiles {
            if file.last == saved.changeCount { return saved }
            let location = directory + "/" + file.name
            let batch: FolderBatch
            do {
                batch = try FolderBatch(decoding: files.contents(of: location))
            } catch {
                report.problems.append("\(location) is not a file of this device (\(error)); it was passed over")
                continue
            }
            guard batch.writer.id == own, batch.document == document, batch.last == file.last else {
                report.problems.append("\(location) does not hold what its name says; it was passed over")
                continue
            }
            if logged == nil {
                do {
                    logged = try store.vector(of: document)
                } catch {
                    throw .store(error, while: "reading the vector of document \(document)")
                }
            }
            // Signed by this device, but not from this log (its key copied to another machine): nothing is written.
            guard batch.vector.isContained(in: logged!) else {
                report.problems.append("\(location) names changes this log lacks; document \(document) was not written")
                return nil
            }
            return batch.vector
        }
        return saved
    }

    /// Whether the file at `path` is one this device wrote: it decodes, and its writer, who signed it, is `device`.
    private func isOwnFile(_ path: String, of device: DeviceID) -> Bool {
        guard let bytes = try? files.contents(of: path), let batch = try? FolderBatch(decoding: bytes) else {
            return false
        }
        return batch.writer.id == device
    }

    // MARK: The folder

    /// The folder's identity, created on first use.
    ///
    /// - Throws: ``SyncError`` `io`, or `malformed` when the identity file is damaged.
    public func identity() throws -> UUIDBytes {
        let location = root.path + "/" + Self.identityFileName
        for _ in 0..<2 {
            switch try files.kind(location) {
            case .file:
                let text = String(decoding: try files.contents(of: location), as: UTF8.self)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                guard lines.count == 3, lines[0] == Self.identityHeader, lines[2].isEmpty, let id = UUIDBytes(lines[1])
                else {
                    throw SyncError(.malformed, "\(location) is not a Folio sync folder's identity file")
                }
                return id
            case .absent:
                try files.ensureDirectory(root.path)
                let contents = "\(Self.identityHeader)\n\(identifiers.next())\n"
                // Two processes may create it at once: the first link wins and both read the winner.
                _ = try files.publish(
                    Array(contents.utf8), as: Self.identityFileName, in: root.path,
                    temporaryName: "\(identifiers.next())")
            case .directory, .other:
                throw SyncError(
                    .malformed, "\(location) should be a Folio sync folder's identity file but is something else")
            }
        }
        throw SyncError(.io, "\(location) could not be created")
    }

    /// The devices that have a directory in the folder, in identity order.
    private func writers() throws(SyncError) -> [DeviceID] {
        try identities(in: root.path).map(DeviceID.init)
    }

    /// The documents a device has written to the folder, in identity order.
    private func documents(of writer: DeviceID) throws(SyncError) -> [DocumentID] {
        try identities(in: root.path + "/" + writer.description).map(DocumentID.init)
    }

    /// The subdirectories of `directory` named by an identity in canonical form, in identity order; other names
    /// (temporary files, the identity file, anything a person put there) are ignored.
    private func identities(in directory: String) throws(SyncError) -> [UUIDBytes] {
        var found: [UUIDBytes] = []
        for name in try files.names(in: directory) {
            guard let id = UUIDBytes(name), id.description == name, try files.kind(directory + "/" + name) == .directory
            else { continue }
            found.append(id)
        }
        return found.sorted()
    }

    private func path(_ writer: DeviceID, _ document: DocumentID) -> String {
        root.path + "/" + writer.description + "/" + document.description
    }

    private func cursorKey(_ writer: DeviceID, folder: UUIDBytes) -> SyncCursorKey {
        SyncCursorKey(peer: "folder \(folder) \(writer)")
    }

    private func contentsKey(folder: UUIDBytes) -> SyncCursorKey {
        SyncCursorKey(peer: "folder \(folder) read")
    }

    private func cursor(of writer: DeviceID, document: DocumentID, folder: UUIDBytes, in store: ChangeLogStore)
        throws(SyncError) -> VersionVector
    {
        do {
            return try store.syncCursors.vector(cursorKey(writer, folder: folder), of: document)
        } catch {
            throw .store(error, while: "reading the folder cursor of device \(writer)")
        }
    }
}
