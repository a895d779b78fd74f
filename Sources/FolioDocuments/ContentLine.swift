import FolioCore

/// Which contents a change shows, decided from the change's causal past alone, so that the device that makes a
/// change, every device that replays it and every device that weighs it against other heads agree.
///
/// A change's state is its primary parent's state with its own operations applied (a lifecycle change applies
/// none). The primary parent is, for a resolution, among the versions it chose (``Change/keptVersions``), and
/// otherwise among all its parents: of those that carry contents, the one that would win (highest lamport, then
/// device). A parent carries no contents of its own when it only renamed or moved contents that another parent
/// includes. Only the parents are consulted, never the other heads a device happened to hold: a writer that joins
/// heads must make sure this rule lands on the version it showed (see ``Document`` `append`).
struct ContentLine {
    /// The change of this document with this hash, or `nil` when the log does not hold it.
    let lookup: (ChangeHash) throws(DocumentError) -> Change?

    /// The parent whose state `change` starts from; `nil` for a root.
    ///
    /// - Throws: ``DocumentError`` `.store` when a parent is not in the log or the log cannot be read.
    func primaryParent(of change: Change) throws(DocumentError) -> Change? {
        let (parents, missing) = try candidates(of: change)
        if let missing {
            throw DocumentError(.store, "change \(change.id) names parent \(missing.shortHex), which is not in the log")
        }
        return try primary(among: parents)
    }

    /// The change whose contents `change` shows: itself, or for a lifecycle change its primary parent's (followed
    /// down while that is a lifecycle change too). A parent missing from the log ends the walk there.
    func contentBase(of change: Change) throws(DocumentError) -> Change {
        var base = change
        while case .lifecycle = base.kind {
            let (parents, missing) = try candidates(of: base)
            guard missing == nil, let parent = try primary(among: parents) else { break }
            base = parent
        }
        return base
    }

    /// The parents the rule chooses among (a resolution's kept versions), or the first that is not in the log.
    private func candidates(of change: Change) throws(DocumentError) -> (parents: [Change], missing: ChangeHash?) {
        let kept = change.keptVersions
        let hashes = kept.isEmpty ? change.parents : kept
        var parents: [Change] = []
        for hash in hashes {
            guard let parent = try lookup(hash) else { return ([], hash) }
            parents.append(parent)
        }
        return (parents, nil)
    }

    private func primary(among parents: [Change]) throws(DocumentError) -> Change? {
        var parents = parents
        if parents.count > 1 {
            var carrying: [Change] = []
            for parent in parents where try carriesContents(parent, beside: parents) { carrying.append(parent) }
            if !carrying.isEmpty { parents = carrying }
        }
        return parents.max { ($0.lamport, $0.id.device) < ($1.lamport, $1.id.device) }
    }

    /// Whether `candidate` carries contents of its own beside `others`: it is not a lifecycle change made on
    /// contents that one of `others` built on. Another rename, move or delete of the same contents builds on
    /// nothing: two devices deleting one version leave that version standing against the others. A head a change
    /// joins beside the version it is made on must not carry contents, or the rule could follow it instead.
    func carriesContents(_ candidate: Change, beside others: [Change]) throws(DocumentError) -> Bool {
        let base = try contentBase(of: candidate)
        guard base.hash != candidate.hash else { return true }
        for other in others where other.hash != candidate.hash && other.vector.contains(base.id) {
            if try contentBase(of: other).hash != base.hash { return false }
        }
        return true
    }
}

extension Change {
    /// For a resolution, the versions it kept among those it settled: its `chosen` heads that are also its parents,
    /// in ascending order. Empty for any other change, and for a resolution that chose none of its parents.
    ///
    /// A resolution is made on every competing head, so a chosen head that is not a parent is forged or corrupt:
    /// followed, it would show contents from outside the change's past, on the devices that happen to hold them,
    /// and make the document unopenable on the others. It counts for nothing, the same on every device.
    ///
    /// - Complexity: O(chosen + parents).
    var keptVersions: [ChangeHash] {
        guard case .resolution(let resolution) = kind, !resolution.chosen.isEmpty else { return [] }
        let parents = Set(parents)
        return resolution.chosen.filter { parents.contains($0) }
    }
}
