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

    /// The heads that are versions, and those that are not: a head that changed only the document's name or place
    /// since contents that another head already includes (a rename or a move concurrent with an edit) competes
    /// with nothing; the next change is made on it too, which joins the two.
    func contentHeads(of id: DocumentID) throws(DocumentError) -> (versions: [Change], absorbed: [Change]) {
        let heads: [Change]
        do { heads = try store.heads(of: id) } catch { throw .store(error, "reading heads") }
        guard heads.count > 1 else { return (heads, []) }
        var versions: [Change] = []
        var absorbed: [Change] = []
        for candidate in heads {
            var base = candidate
            while case .lifecycle = base.kind, let parent = base.parents.first {
                // Lifecycle changes are made on one line (their author's), so any parent leads back to its contents.
                do {
                    guard let found = try store.change(parent, of: id) else { break }
                    base = found
                } catch {
                    throw .store(error, "reading the log")
                }
            }
            let subsumed = base.hash != candidate.hash
                && heads.contains { $0.hash != candidate.hash && $0.vector.contains(base.id) }
            if subsumed { absorbed.append(candidate) } else { versions.append(candidate) }
        }
        if versions.isEmpty {
            // Every head only renamed or moved the same contents (a rename race): those contents are the one
            // version, shown at the head every device picks.
            let winner = absorbed.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }!
            versions = [winner]
            absorbed.removeAll { $0.hash == winner.hash }
        }
        return (versions, absorbed)
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
        do { own = try store.vector(of: id)[device.id] } catch { throw .store(error, "reading the vector of document \(id)") }
        // Heads that only renamed or moved contents another head holds are joined too: they carry no version, and a
        // later rename must descend from the renames it has seen.
        guard own > winner.vector[device.id] else { return [winner.hash] + absorbed.map(\.hash) }
        let latest: Change?
        do { latest = try store.change(ChangeID(device: device.id, seq: own), of: id) } catch {
            throw .store(error, "reading the log of document \(id)")
        }
        return [latest?.hash ?? winner.hash]
    }
}
