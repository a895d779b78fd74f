import FolioCore
import FolioStore
import Foundation

extension DocumentLibrary {
    /// The documents, sorted by name then identity; deleted ones only when asked.
    ///
    /// Runs off the caller's thread (it reads the store).
    ///
    /// - Complexity: one read of every document's heads, plus ``info(of:)`` of the documents whose heads moved since
    ///   they were last read.
    /// - Throws: ``DocumentError`` `.store`.
    public func documents(includingDeleted: Bool = false) async throws(DocumentError) -> [DocumentInfo] {
        try await offThePool { () throws(DocumentError) in try self.catalog(includingDeleted: includingDeleted) }
    }

    /// The documents that satisfy `predicate` (by name, type, modification date…), sorted by name.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func documents(
        where predicate: (DocumentInfo) -> Bool, includingDeleted: Bool = false
    ) async throws(DocumentError) -> [DocumentInfo] {
        try await documents(includingDeleted: includingDeleted).filter(predicate)
    }

    /// What the log says of document `id`, or `nil` when it has no creation. Runs off the caller's thread.
    ///
    /// - Throws: ``DocumentError`` `.store`.
    public func info(of id: DocumentID) async throws(DocumentError) -> DocumentInfo? {
        try await offThePool { () throws(DocumentError) in try self.catalogInfo(of: id) }
    }

    /// The documents, sorted by name then identity (what ``documents(includingDeleted:)`` returns), read on the
    /// caller's thread.
    package func catalog(includingDeleted: Bool) throws(DocumentError) -> [DocumentInfo] {
        let summaries: [(document: DocumentID, vector: VersionVector, heads: [ChangeHash])]
        do { summaries = try store.summaries() } catch { throw DocumentError.store(error, "listing documents") }
        var result: [DocumentInfo] = []
        for summary in summaries {
            let cached = catalogCache.withLock { $0[summary.document] }
            let info: DocumentInfo?
            if let cached, cached.heads == summary.heads {
                info = cached.info
            } else {
                info = try catalogInfo(of: summary.document)
            }
            guard let info, includingDeleted || !info.isDeleted else { continue }
            result.append(info)
        }
        return result.sorted { ($0.displayName, $0.id) < ($1.displayName, $1.id) }
    }

    /// What ``info(of:)`` returns, read on the caller's thread.
    package func catalogInfo(of id: DocumentID) throws(DocumentError) -> DocumentInfo? {
        do {
            let heads = try store.heads(of: id)
            if let cached = catalogCache.withLock({ $0[id] }), cached.heads == heads.map(\.hash) { return cached.info }
            let lifecycle = try store.lifecycleChanges(of: id)
            let info = DocumentCatalog.info(of: id, lifecycle: lifecycle, heads: heads)
            // Read one after the other, the lifecycle may hold a change made after the heads were read: the info
            // is cached under the heads only when every lifecycle change read is in their past.
            if lifecycle.allSatisfy({ change in heads.contains { $0.vector.contains(change.id) } }) {
                catalogCache.withLock { $0[id] = (heads.map(\.hash), info) }
            }
            return info
        } catch {
            throw DocumentError.store(error, "reading document \(id)")
        }
    }

    /// Renames a document (a logged change); its file is renamed too. Runs off the caller's thread.
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.invalidName`, `.store`, `.save`.
    public func rename(_ id: DocumentID, to name: String) async throws(DocumentError) {
        try Self.validate(name: name)
        try await offThePool { () throws(DocumentError) in try self.relocate(id, by: .rename(to: name)) }
    }

    /// Moves a document between containers (a logged change); its file moves too. Runs off the caller's thread.
    ///
    /// The container decides what syncs. A document moved to `DocumentContainer.local` stays on this device from
    /// then on: the move itself and every later change of this device to it are neither announced nor sent, and
    /// the changes of it that peers still make are not taken, until it is moved back to
    /// `DocumentContainer.shared`, which publishes it with its whole history (see
    /// `UnpublishedDocuments.documents()`). The move and the store's record of what is unpublished are one
    /// transaction.
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.store`, `.save`.
    public func move(_ id: DocumentID, to container: DocumentContainer) async throws(DocumentError) {
        try await offThePool { () throws(DocumentError) in try self.relocate(id, by: .move(to: container)) }
    }

    /// Deletes a document (a logged change): its file is removed, its history kept, so it can be restored. Runs off
    /// the caller's thread.
    ///
    /// Only the file this device saved the document to is removed: a file of the document's name that Folio did
    /// not write (the document was never saved here) is left alone.
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.store`, `.save`.
    public func delete(_ id: DocumentID) async throws(DocumentError) {
        try await offThePool { () throws(DocumentError) in try self.recordDeletion(of: id) }
    }

    /// Restores a deleted document (a logged change); its file is written again when it is next saved. Runs off the
    /// caller's thread.
    ///
    /// - Throws: ``DocumentError`` `.notFound`, `.store`.
    public func restore(_ id: DocumentID) async throws(DocumentError) {
        try await offThePool { () throws(DocumentError) in
            guard let info = try self.catalogInfo(of: id), info.isDeleted else {
                throw DocumentError(.notFound, "no deleted document \(id) to restore")
            }
            try self.appendLifecycle(.restore, to: id)
        }
    }

    /// What ``delete(_:)`` does, on the caller's thread.
    func recordDeletion(of id: DocumentID) throws(DocumentError) {
        guard let info = try catalogInfo(of: id), !info.isDeleted else {
            throw DocumentError(.notFound, "no document \(id) to delete")
        }
        let saved = try savedFileRecord(of: id).map { url(ofRelativePath: $0.relativePath) }
        try appendLifecycle(.delete, to: id)
        guard let url = saved else { return }
        do {
            if try fileSystem.itemKind(at: url) != .absent { try fileSystem.remove(at: url) }
        } catch {
            throw DocumentError(
                .save, "\(info.displayName) is deleted, but its file \(url.path) could not be removed", cause: error)
        }
    }

    private func relocate(_ id: DocumentID, by event: LifecycleEvent) throws(DocumentError) {
        guard let before = try catalogInfo(of: id), !before.isDeleted else {
            throw DocumentError(.notFound, "no document \(id)")
        }
        let oldURL = try fileLocation(for: before)
        try appendLifecycle(event, to: id)
        guard let after = try catalogInfo(of: id) else { return }
        do {
            try moveFile(of: id, from: oldURL, to: try fileLocation(for: after))
        } catch {
            throw DocumentError(
                .save,
                "\(after.displayName) was renamed or moved, but its file could not follow; it will be written again at the next save",
                cause: error)
        }
    }

    func appendLifecycle(_ event: LifecycleEvent, to id: DocumentID) throws(DocumentError) {
        let parents = try lifecycleParents(of: id)
        // Only this device's own container changes decide what it keeps to itself: a peer's move to local is
        // published only with its move back to shared, so what arrives never makes a document unpublished here.
        var unpublished: Bool?
        if case .move(let container) = event { unpublished = container == .local }
        do {
            try store.append([.lifecycle(event)], to: id, on: .heads(parents), unpublished: unpublished)
        } catch {
            throw .store(error, "recording \(event) of document \(id)")
        }
    }

    /// Turns an outside file or package into a new document (the Inbox case): its first changes are the creation
    /// and a baseline holding the contents, which `Model` must accept.
    ///
    /// - Parameters:
    ///   - url: the file or package directory; it is read, never modified.
    ///   - model: the document's model: its document type says whether `url` is read as a package or a flat file,
    ///     and its `init(contents:)` must accept what is read.
    ///   - name: the display name; by default the file's name without its extension.
    ///   - container: where the new document lives; `.local` by default, which keeps it on this device (see
    ///     ``move(_:to:)``).
    /// - Throws: ``DocumentError`` `.invalidContents` when the model refuses the contents, `.save` when the file
    ///   cannot be read (or is a package with links or special files), `.invalidName`, `.store`.
    @discardableResult
    public func importFile<Model: DocumentModel>(
        at url: URL, as model: Model.Type, named name: String? = nil, into container: DocumentContainer = .local
    ) async throws(DocumentError) -> DocumentInfo {
        let displayName = name ?? url.deletingPathExtension().lastPathComponent
        try Self.validate(name: displayName)
        return try await offThePool { () throws(DocumentError) in
            try self.recordImport(of: url, as: model, named: displayName, into: container)
        }
    }

    /// What ``importFile(at:as:named:into:)`` does, on the caller's thread.
    private func recordImport<Model: DocumentModel>(
        of url: URL, as model: Model.Type, named displayName: String, into container: DocumentContainer
    ) throws(DocumentError) -> DocumentInfo {
        let contents: DocumentContents
        do {
            // Only read: recovery would remove what looks like an unfinished save's leftovers next to the file and
            // inside the package, and the file is not this library's.
            contents = try pipeline.read(at: url, isPackage: Model.documentType.isPackage, recovering: false)
        } catch {
            throw DocumentError(.save, "cannot import \(url.path)", cause: error)
        }
        let loaded: Model
        do {
            loaded = try Model(contents: contents)
        } catch {
            throw DocumentError(
                .invalidContents, "\(url.lastPathComponent) is not a valid \(Model.documentType.identifier) document",
                cause: error)
        }
        let id = DocumentID(using: identifiers)
        do {
            try append(
                [
                    EncodedKind(
                        .lifecycle(
                            .create(name: displayName, type: Model.documentType.identifier, container: container))),
                    baselineKind(loaded.contents(), of: Model.self),
                ], to: id, unpublished: container == .local ? true : nil)
        } catch {
            throw DocumentError.store(error, "importing \(url.lastPathComponent)")
        }
        guard let info = try catalogInfo(of: id) else {
            throw DocumentError(.notFound, "\(displayName) was imported, but the log has no creation of it")
        }
        return info
    }
}
