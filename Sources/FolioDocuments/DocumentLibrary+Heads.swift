import FolioConflicts
import FolioCore
import FolioMerge
import FolioStore

extension DocumentLibrary {
    /// The head every device shows (``FolioConflicts/ContentHeads/winner``).
    func winningHead(of id: DocumentID) throws(DocumentError) -> Change {
        guard let winner = try contentHeads(of: id).winner else {
            throw DocumentError(.notFound, "document \(id) has no changes")
        }
        return winner
    }

    /// The heads that are versions, and those that are not (`PrimaryParentRule.contentHeads(among:)`):
    /// a head that changed only the document's name or place since contents that another head already includes (a
    /// rename or a move concurrent with an edit) competes with nothing; the next change is made on it too, which joins
    /// the two.
    package func contentHeads(of id: DocumentID) throws(DocumentError) -> ContentHeads {
        let heads: [Change]
        do { heads = try store.heads(of: id) } catch { throw .store(error, "reading heads") }
        return try primaryParentRule(of: id).contentHeads(among: heads)
    }

    /// The content rule (`PrimaryParentRule`) over the stored log of document `id`.
    func primaryParentRule(of id: DocumentID) -> PrimaryParentRule<DocumentError> {
        let store = store
        return PrimaryParentRule { hash throws(DocumentError) in
            do { return try store.change(hash, of: id) } catch { throw .store(error, "reading the log") }
        }
    }

    /// The heads a catalog change by this device is made on, as the content rule decides
    /// (``FolioConflicts/PrimaryParentRule/lifecycleParents(of:by:ownCount:latestOwn:)``).
    func lifecycleParents(of id: DocumentID) throws(DocumentError) -> [ChangeHash] {
        let heads = try contentHeads(of: id)
        guard let winner = heads.winner else { throw DocumentError(.notFound, "document \(id) has no changes") }
        let own: UInt64
        let latestOwn: Change?
        do {
            own = try store.vector(of: id)[device.id]
            // Read only when it decides: this device's line is ahead of the version every device shows.
            latestOwn =
                own > winner.vector[device.id] ? try store.change(ChangeID(device: device.id, seq: own), of: id) : nil
        } catch {
            throw .store(error, "reading the log of document \(id)")
        }
        return try primaryParentRule(of: id).lifecycleParents(
            of: heads, by: device.id, ownCount: own, latestOwn: latestOwn)
    }
}

extension DocumentLibrary {
    /// Whether document `id` has competing versions (a conflict that a policy or a person has yet to settle): as an
    /// open document of the library shows them; otherwise whether its heads hold several versions. Versions of a
    /// model that merges character by character may merge silently under `merge`, which only that model can tell:
    /// ask ``hasCompetingVersions(_:as:)`` for a document that is not open.
    ///
    /// Runs off the caller's thread.
    ///
    /// - Throws: `DocumentError` `.store` when the log cannot be read.
    public func hasCompetingVersions(_ id: DocumentID) async throws(DocumentError) -> Bool {
        if let open = await openDocuments.documents(among: [id]).first { return await open.showsCompetingVersions }
        return try await offThePool { () throws(DocumentError) in try self.contentHeads(of: id).versions.count > 1 }
    }

    /// Whether document `id`, of `Model`, has competing versions: as an open document of the library shows them;
    /// otherwise whether its heads hold several versions that do not merge silently under the library's policy
    /// (`ConflictEngine.mergeSilently(hasResolver:in:)`; an app-defined resolver of an open document aside).
    ///
    /// Runs off the caller's thread. For a document that is not open and whose heads hold several versions, this
    /// replays them (from the latest checkpoint) to compare their states.
    ///
    /// - Throws: `DocumentError` `.store` when the log cannot be read, `.invalidContents` when a checkpoint cannot be
    ///   loaded.
    public func hasCompetingVersions<Model: DocumentModel>(_ id: DocumentID, as type: Model.Type)
        async
        throws(DocumentError) -> Bool
    {
        if let open = await openDocuments.documents(among: [id]).first { return await open.showsCompetingVersions }
        return try await offThePool { () throws(DocumentError) in try self.versionsCompete(id, as: type) }
    }

    /// What ``hasCompetingVersions(_:as:)`` answers for a document that is not open, on the caller's thread.
    func versionsCompete<Model: DocumentModel>(_ id: DocumentID, as type: Model.Type) throws(DocumentError) -> Bool {
        let heads = try contentHeads(of: id)
        guard heads.versions.count > 1, let winner = heads.winner else { return false }
        // Grouped by state as an open document groups them: heads with equal states are one version.
        var engine = ConflictEngine<Model>(document: id, policy: conflictPolicy)
        let replay = DocumentReplay<Model>(store: store, document: id)
        var states: [ChangeHash: Model] = [:]
        for head in heads.versions { states[head.hash] = try replay.state(at: head).model }
        engine.observe(heads, states: states, shown: winner.hash)
        guard engine.isInConflict else { return false }
        let history = StoredConflictHistory<Model>(store: store, document: id, subject: "the log of \(id)")
        return try !engine.mergeSilently(hasResolver: false, in: history)
    }
}
