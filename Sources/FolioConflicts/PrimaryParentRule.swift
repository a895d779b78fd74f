import FolioCore

/// Which contents a change shows, decided from the change's causal past alone, so that the device that makes a
/// change, every device that replays it and every device that weighs it against other heads agree.
///
/// A change's state is its primary parent's state with its own operations applied (a lifecycle change applies
/// none). The primary parent is, for a resolution, among the versions it chose (``FolioCore/Change/keptVersions``),
/// and otherwise among all its parents: of those that carry contents, the one that would win (highest lamport, then
/// device). A parent carries no contents of its own when it only renamed or moved contents that another parent
/// includes. Only the parents are consulted, never the other heads a device happened to hold: a writer that joins
/// heads must make sure this rule lands on the version it showed.
///
/// The rule reads changes through `lookup` and does nothing else: `Failure` is whatever the lookup throws.
public struct PrimaryParentRule<Failure: Error> {
    /// The parent a change starts from, as the rule finds it.
    public enum PrimaryParent {
        /// The change is a root: it has no parents to start from.
        case root
        /// The parent whose state the change starts from.
        case parent(Change)
        /// A parent the rule must consult is not in the log (the change is forged, or the log incomplete).
        case missing(ChangeHash)
    }

    /// The change of the document with this hash, or `nil` when the log does not hold it.
    public let lookup: (ChangeHash) throws(Failure) -> Change?

    /// Creates the rule over a log read through `lookup`.
    public init(lookup: @escaping (ChangeHash) throws(Failure) -> Change?) {
        self.lookup = lookup
    }

    /// The parent whose state `change` starts from.
    ///
    /// - Throws: `Failure`, what `lookup` throws.
    public func primaryParent(of change: Change) throws(Failure) -> PrimaryParent {
        let (parents, missing) = try candidates(of: change)
        if let missing { return .missing(missing) }
        return try primary(among: parents).map { .parent($0) } ?? .root
    }

    /// The change whose contents `change` shows: itself, or for a lifecycle change its primary parent's (followed
    /// down while that is a lifecycle change too). A parent missing from the log ends the walk there.
    ///
    /// - Throws: `Failure`, what `lookup` throws.
    public func contentBase(of change: Change) throws(Failure) -> Change {
        var base = change
        while case .lifecycle = base.kind {
            let (parents, missing) = try candidates(of: base)
            guard missing == nil, let parent = try primary(among: parents) else { break }
            base = parent
        }
        return base
    }

    /// Whether `candidate` carries contents of its own beside `others`: it is not a lifecycle change made on
    /// contents that one of `others` built on. Another rename, move or delete of the same contents builds on
    /// nothing: two devices deleting one version leave that version standing against the others. A head a change
    /// joins beside the version it is made on must not carry contents, or the rule could follow it instead.
    ///
    /// - Throws: `Failure`, what `lookup` throws.
    public func carriesContents(_ candidate: Change, beside others: [Change]) throws(Failure) -> Bool {
        let base = try contentBase(of: candidate)
        guard base.hash != candidate.hash else { return true }
        for other in others where other.hash != candidate.hash && other.vector.contains(base.id) {
            if try contentBase(of: other).hash != base.hash { return false }
        }
        return true
    }

    /// The heads that are versions, and those that are not: a head that changed only the document's name or place
    /// since contents that another head already includes (a rename or a move concurrent with an edit) competes
    /// with nothing. When every head only renamed or moved the same contents (a rename race), those contents are
    /// the one version, shown at the head every device picks (highest lamport, then device).
    ///
    /// - Throws: `Failure`, what `lookup` throws.
    public func contentHeads(among heads: [Change]) throws(Failure) -> ContentHeads {
        guard heads.count > 1 else { return ContentHeads(versions: heads, absorbed: []) }
        var versions: [Change] = []
        var absorbed: [Change] = []
        for candidate in heads {
            if try carriesContents(candidate, beside: heads) {
                versions.append(candidate)
            } else {
                absorbed.append(candidate)
            }
        }
        if versions.isEmpty, let winner = absorbed.winningHead() {
            versions = [winner]
            absorbed.removeAll { $0.hash == winner.hash }
        }
        return ContentHeads(versions: versions, absorbed: absorbed)
    }

    /// The parents the rule chooses among (a resolution's kept versions), or the first that is not in the log.
    private func candidates(of change: Change) throws(Failure) -> (parents: [Change], missing: ChangeHash?) {
        let kept = change.keptVersions
        let hashes = kept.isEmpty ? change.parents : kept
        var parents: [Change] = []
        for hash in hashes {
            guard let parent = try lookup(hash) else { return ([], hash) }
            parents.append(parent)
        }
        return (parents, nil)
    }

    private func primary(among parents: [Change]) throws(Failure) -> Change? {
        var parents = parents
        if parents.count > 1 {
            var carrying: [Change] = []
            for parent in parents where try carriesContents(parent, beside: parents) { carrying.append(parent) }
            if !carrying.isEmpty { parents = carrying }
        }
        return parents.winningHead()
    }
}
