import FolioCore
import FolioMerge

/// The change graph of a character merge (`CharacterMergeable`), replayed once: the merge of its heads, and for a
/// model whose text is all of it, the state at each head, are read from the same replay.
///
/// A document whose versions merge silently needs both: the state at each head to group the versions, then their
/// merge. Reading the heads' states from the graph spares replaying each version's edits a second time.
final class CharacterMergeGraph<Model: DocumentModel> {
    /// The heads the graph was replayed from.
    let heads: Set<ChangeHash>
    private var graph: TextEventGraph<ChangeID>
    /// Each head's event; `nil` for a head whose state is the graph's base.
    private let headEvents: [ChangeHash: Int?]
    /// The model's parts beside the text, merged (for a model whose text is all of it, the walk's base state).
    private let rest: Model
    /// Whether every edit applied and every content was accepted: only then is a head's state read from the graph
    /// what a replay of its own changes gives.
    private let appliedEverything: Bool
    /// Whether the text is all of the model, so that a head's text is its state.
    private let textIsEverything: Bool
    /// The model with its text replaced, and a text overlap's location as the model names it.
    private let withText: (Model, String) -> Model
    private let location: (String) -> String

    init<M: CharacterMergeable>(_ replayed: DocumentReplay<Model>.GraphReplay<M>, from heads: [Change]) {
        self.heads = Set(heads.map(\.hash))
        graph = replayed.graph
        headEvents = replayed.headEvents
        rest = replayed.rest as! Model
        appliedEverything = replayed.skipped == 0 && replayed.refused.isEmpty
        textIsEverything = !M.hasPartsBesideText
        withText = { model, text in (model as! M).replacingMergeableText(with: text) as! Model }
        location = { M.textConflictLocation($0) }
    }

    /// The state at `head` read from the graph: its text is the graph's view at its event. `nil` when the graph
    /// does not give it exactly (the model has parts beside its text, an edit was skipped or contents refused,
    /// `head` is not one of ``heads``): the caller replays it instead.
    func state(at head: ChangeHash) -> Model? {
        guard textIsEverything, appliedEverything, let event = headEvents[head] else { return nil }
        guard let event else { return rest }
        guard let text = try? graph.text(at: [event]) else { return nil }
        return withText(rest, text)
    }

    /// The character merge of `versions` (heads among ``heads``), as ``DocumentReplay/characterMerge(of:)`` makes
    /// it: the merged state, and a conflict wherever two versions overlap.
    ///
    /// - Throws: ``DocumentError`` `.store` when a version's event is not in the graph.
    func merge(of versions: [Change]) throws(DocumentError) -> MergeResult<Model> {
        let events = versions.compactMap { headEvents[$0.hash] ?? nil }
        let merge: TextMerge
        do {
            merge = try graph.merge(of: events)
        } catch {
            // Unreachable: every head's index comes from the graph itself.
            throw DocumentError(.store, "a head of the merge is not in the change graph")
        }
        let conflicts = merge.overlaps.map { overlap in
            MergeConflict(location: location(overlap.location), base: overlap.base, values: overlap.texts)
        }
        return MergeResult(merged: withText(rest, merge.text), conflicts: conflicts)
    }
}
