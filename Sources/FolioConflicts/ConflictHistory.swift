import FolioCore

/// What the conflict engine reads of one document's history: its changes, and the state at a change.
///
/// The engine asks for nothing else and does nothing else; a store-backed history reads its log, a test's history
/// holds values. `Failure` is what reading throws, passed through the engine unchanged.
public protocol ConflictHistory<Model> {
    /// The document's model.
    associatedtype Model: DocumentModel
    /// What reading the history throws.
    associatedtype Failure: Error

    /// The change with this hash, or `nil` when the history does not hold it.
    ///
    /// - Throws: `Failure` when the history cannot be read.
    func change(_ hash: ChangeHash) throws(Failure) -> Change?

    /// The change with this identity, or `nil` when the history does not hold it.
    ///
    /// - Throws: `Failure` when the history cannot be read.
    func change(_ id: ChangeID) throws(Failure) -> Change?

    /// The state at `change` (its replay along primary parents, ``PrimaryParentRule``).
    ///
    /// - Throws: `Failure` when the history cannot be read or its contents cannot be loaded.
    func state(at change: Change) throws(Failure) -> Model

    /// The merge of `heads` (the competing versions' heads, in the versions' order) character by character from the
    /// change graph, for a model that merges so (`CharacterMergeable`): when clean, the state a `merge` resolution
    /// without contents, made on `heads`, shows; otherwise a conflict wherever two versions overlap (deleted the
    /// same characters of their common text differently, `TextEventGraph.merge(of:)`), and a merged state that
    /// shows the first of the two versions there. `nil` when this history does not replay the graph; the engine
    /// then merges the versions' states instead.
    ///
    /// - Throws: `Failure` when the history cannot be read or its contents cannot be loaded.
    func characterMerge(of heads: [Change]) throws(Failure) -> MergeResult<Model>?
}

extension ConflictHistory {
    /// A history replays no graph unless it says so.
    public func characterMerge(of heads: [Change]) throws(Failure) -> MergeResult<Model>? { nil }
}

extension ConflictHistory {
    /// The content rule over this history.
    public var primaryParentRule: PrimaryParentRule<Failure> {
        PrimaryParentRule { hash throws(Failure) in try change(hash) }
    }
}
