import FolioCore
import FolioMerge

extension DocumentReplay {
    /// What taking back `changes` (a step of this device's edits) does to the text of `shown` (the heads whose
    /// merge the document shows, every change in their past): the text edits, at the positions of that text, that
    /// delete what the changes typed and type again what they deleted, and the text they apply to.
    ///
    /// The graph of `shown`'s history is replayed back to before the first change (its parents are walked to as
    /// heads too), and the changes' effects are taken back in it (``TextEventGraph/reversal(of:)``): whatever other
    /// devices typed before, between or inside the changes' edits stays where it is.
    ///
    /// - Throws: ``DocumentError`` as ``graphState(from:read:)`` does; `.invalidOperation` when the model does not
    ///   merge character by character or a change is not in the graph of `shown`.
    ///
    /// `copies` (some of `changes`: undos and redos) typed again what other changes of `changes` deleted: when another
    /// device deleted some of what they typed, the reversal would bring back what that device deleted, and the step
    /// is refused.
    ///
    /// - Throws: also `.invalidOperation` when another device deleted a scalar one of `copies` typed.
    func reversalEdits(of changes: [Change], copies: [Change] = [], in shown: [Change]) throws(DocumentError) -> (
        edits: [TextEdit], text: [Unicode.Scalar]
    ) {
        guard let type = Model.self as? any CharacterMergeable.Type else {
            throw DocumentError(.invalidOperation, "this document's model does not merge character by character")
        }
        return try reversalEdits(type, of: changes, copies: copies, in: shown)
    }

    private func reversalEdits<M: CharacterMergeable>(
        _ type: M.Type, of changes: [Change], copies: [Change], in shown: [Change]
    ) throws(DocumentError) -> (edits: [TextEdit], text: [Unicode.Scalar]) {
        var heads = shown
        var included = Set(shown.map(\.hash))
        // The first change's parents as heads too: the walk stops no later than they are, so that every change of
        // the step is an event of the graph.
        var parents: [Change] = []
        for hash in changes.first?.parents ?? [] {
            let parent: Change?
            do { parent = try store.change(hash, of: document) } catch { throw .store(error, "reading the log") }
            guard let parent else {
                throw DocumentError(.store, "change \(changes[0].id) names parent \(hash.shortHex), not in the log")
            }
            parents.append(parent)
        }
        for change in changes + parents where included.insert(change.hash).inserted { heads.append(change) }
        let replayed = try replayGraph(type, from: heads, read: nil)
        var events: [Int] = []
        for change in changes {
            guard let event = replayed.headEvents[change.hash] ?? nil else {
                throw DocumentError(.invalidOperation, "change \(change.id) is not in the history of the version shown")
            }
            events.append(event)
        }
        let copied = copies.compactMap { replayed.headEvents[$0.hash] ?? nil }
        let othersDeletedCopies: Bool
        let edits: [TextEdit]
        do {
            othersDeletedCopies = try replayed.graph.othersDeleted(scalarsTypedBy: copied, apartFrom: events)
            edits = try replayed.graph.reversal(of: events)
        } catch {
            // Unreachable: every event's index comes from the graph itself.
            throw DocumentError(.invalidOperation, "a change of the step is not in the change graph")
        }
        guard !othersDeletedCopies else {
            throw DocumentError(
                .invalidOperation,
                "another device deleted text that an undo or redo of this device typed again since the step: taking "
                    + "the step back would bring that text back")
        }
        return (edits, Array(replayed.graph.text.unicodeScalars))
    }
}
