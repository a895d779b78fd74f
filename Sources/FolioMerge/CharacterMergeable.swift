import FolioCore

/// A model whose text merges character by character from the change graph (``TextEventGraph``), under the `merge`
/// strategy.
///
/// Such a model's merge is a small change that names the versions it merges and stores no contents: every device
/// computes the merged text by replaying the edits of the versions' history, each at the positions its author saw,
/// so the result is the same on every device whatever order the changes arrived in. ``MergeableDocumentModel/merge(base:versions:)``
/// stays the merge of states, for what has no history to replay.
public protocol CharacterMergeable: MergeableDocumentModel {
    /// The text the change graph merges.
    var mergeableText: [Unicode.Scalar] { get }

    /// A model holding `text`.
    init(mergedText text: String)

    /// The text edits `operation` makes, at the positions of the text it applies to; `nil` for an operation the
    /// graph cannot replay (it is then skipped, on every device alike).
    static func textEdits(of operation: Operation) -> [TextEdit]?
}
