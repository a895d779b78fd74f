import FolioConflicts
import FolioCore
import FolioStore

extension DocumentLibrary {
    /// The head every device shows: the highest lamport, then the highest device.
    func winningHead(of id: DocumentID) throws(DocumentError) -> Change {
        try winner(among: contentHeads(of: id).versions, of: id)
    }

    private func winner(among versions: [Change], of id: DocumentID) throws(DocumentError) -> Change {
        guard let winner = versions.max(by: { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }) else {
            throw DocumentError(.notFound, "document \(id) has no changes")
        }
        return winner
    }

    /// The heads that are versions, and those that are not (`PrimaryParentRule.contentHeads(among:)`):
    /// a head that changed only the document's name or place since contents that another head already includes (a
    /// rename or a move concurrent with an edit) competes with nothing; the next change is made on it too, which joins
    /// the two.
    func contentHeads(of id: DocumentID) throws(DocumentError) -> (versions: [Change], absorbed: [Change]) {
        let heads: [Change]
        do { heads = try store.heads(of: id) } catch { throw .store(error, "reading heads") }
        let split = try primaryParentRule(of: id).contentHeads(among: heads)
        return (split.versions, split.absorbed)
    }

    /// The content rule (`PrimaryParentRule`) over the stored log of document `id`.
    func primaryParentRule(of id: DocumentID) -> PrimaryParentRule<DocumentError> {
        let store = store
        return PrimaryParentRule { hash throws(DocumentError) in
            do { return try store.change(hash, of: id) } catch { throw .store(error, "reading the log") }
        }
    }

    /// The heads a catalog change (rename, move, delete, restore) by this device is made on: the version every
    /// device shows and the heads that carry no version, so the change carries its causal context without joining
    /// competing versions (which would settle a conflict silently, and differently from what the document showed);
    /// or, when this device's own latest change is a competing version, that one alone (a device's changes form one
    /// line, so the change would join it anyway).
    func lifecycleParents(of id: DocumentID) throws(DocumentError) -> [ChangeHash] {
        let (versions, absorbed) = try contentHeads(of: id)
        let winner = try winner(among: versions, of: id)
        let own: UInt64
        do { own = try store.vector(of: id)[device.id] } catch {
            throw .store(error, "reading the vector of document \(id)")
        }
        // Heads that only renamed or moved contents another head holds are joined too: they carry no version, and a
        // later rename must descend from the renames it has seen.
        guard own > winner.vector[device.id] else {
            // Only the heads the content rule passes over beside the winner: a head absorbed by a version this
            // change does not join would otherwise decide its contents (see ``FolioConflicts/PrimaryParentRule``).
            let line = primaryParentRule(of: id)
            var joined = [winner.hash]
            for head in absorbed where try !line.carriesContents(head, beside: [winner]) { joined.append(head.hash) }
            return joined
        }
        let latest: Change?
        do { latest = try store.change(ChangeID(device: device.id, seq: own), of: id) } catch {
            throw .store(error, "reading the log of document \(id)")
        }
        return [latest?.hash ?? winner.hash]
    }
}

extension DocumentLibrary {
    /// Whether document `id` has competing versions (a conflict that a policy or a person has yet to settle).
    ///
    /// - Throws: `DocumentError` `.store` when the log cannot be read.
    public func hasCompetingVersions(_ id: DocumentID) throws -> Bool {
        try contentHeads(of: id).versions.count > 1
    }
}
