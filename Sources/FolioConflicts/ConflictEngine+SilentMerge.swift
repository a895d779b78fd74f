import FolioCore
import FolioMerge

extension ConflictEngine {
    /// Takes the versions last observed as one when they merge silently: under the `merge` strategy, with no
    /// app-defined resolver, for a model that merges character by character (`CharacterMergeable`), when
    /// ``settlementByMerging(in:)`` would record a merge computed from the change graph (no two versions overlap, no
    /// part beside the text changed two ways). Nothing is recorded: the document shows the merged state, and the
    /// next edit is made on every head (`Edit.isMadeOnMerge`), which is the merge, as in Eg-walker. Concurrent
    /// typing so leaves no resolution change, no conflict record and nothing in the loss ledger; only what needs or
    /// gets a decision does (an overlap, a person's choice, a policy that picks).
    ///
    /// Every device that holds the same heads reaches the same merged state: it depends on the heads and the history
    /// alone.
    ///
    /// - Returns: whether the versions merged silently; ``versions`` is then one group of every head with the merged
    ///   state, and ``isInConflict`` is false until the heads are observed again.
    /// - Throws: `History.Failure`, what reading `history` throws.
    @discardableResult
    public mutating func mergeSilently<History: ConflictHistory<Model>>(
        hasResolver: Bool, in history: History
    ) throws(History.Failure) -> Bool {
        // A version of several heads (devices that made the same contents apart) merges as one, by one of its heads:
        // an edit on every head would merge them all, each one's text once more. That merge keeps its resolution.
        guard isInConflict, !hasResolver, strategy == .merge, Model.self is any CharacterMergeable.Type,
            versions.allSatisfy({ $0.heads.count == 1 }),
            case .settle(let settlement)? = try settlementByMerging(in: history),
            settlement.resolution.strategy == .merge, settlement.resolution.contents == nil,
            settlement.resolution.discarded.isEmpty
        else { return false }
        versions = [HeadGroup(heads: versions.flatMap(\.heads), state: settlement.state)]
        return true
    }
}
