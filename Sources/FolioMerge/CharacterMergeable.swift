import FolioCore
import Foundation

/// A model whose text merges character by character from the change graph (``TextEventGraph``), under the `merge`
/// strategy.
///
/// Such a model's merge is a small change that names the versions it merges and stores no contents: every device
/// computes the merged text by replaying the edits of the versions' history, each at the positions its author saw,
/// so the result is the same on every device whatever order the changes arrived in. Operations on other parts of the
/// model (a package's images, say) are applied in the replay's order (by lamport, then change id), which is the same
/// on every device; a baseline or a resolution with contents met among them changes only the parts its contents
/// changed from the state it was made on (``applyingOtherParts(changedFrom:to:)``). Versions whose other parts
/// changed differently are merged from their states instead (``otherPartsDiverge(base:versions:)``), and what does not
/// merge waits for a person as before.
/// `MergeableDocumentModel.merge(base:versions:)` stays the merge of states.
public protocol CharacterMergeable: MergeableDocumentModel {
    /// The text the change graph merges.
    var mergeableText: [Unicode.Scalar] { get }
    /// How many scalars ``mergeableText`` holds, without building it (the default builds it).
    var mergeableTextCount: Int { get }

    /// This model with its text replaced by `text`, its other parts kept.
    func replacingMergeableText(with text: String) -> Self

    /// The text edits `operation` makes, at the positions of the text it applies to; `nil` for an operation on
    /// another part of the model, which the replay applies to the model itself.
    static func textEdits(of operation: Operation) -> [TextEdit]?

    /// Adds the text edits `operation` makes to `edits` and returns `true`; returns `false` for an operation on
    /// another part of the model, leaving `edits` as it was. The replay reads a long history's edits through it, into
    /// one list for all of the history's changes: the `appendTextEdits` requirements only append to `edits`, never
    /// change or remove what it held before.
    static func appendTextEdits(of operation: Operation, to edits: inout [TextEdit]) -> Bool

    /// Adds the text edits of `operations` (an edit's, decoded) to `edits`, each one's as ``appendTextEdits(of:to:)``
    /// makes them, and the operations on other parts of the model to `others`. The default calls
    /// ``appendTextEdits(of:to:)`` for each; a model may convert them in one pass of its own.
    static func appendTextEdits(of operations: [Operation], to edits: inout [TextEdit], others: inout [Operation])

    /// Adds the text edits of an edit's group of operations (in the binary form `DocumentOperation.decodeGroup(_:)`
    /// reads) to `edits`, each operation's as ``appendTextEdits(of:to:)`` makes them, and the operations on other
    /// parts of the model to `others`; returns `false`, adding nothing, when the group does not decode. The replay
    /// reads a long history through it, once per change: a model may decode its own operations here without the
    /// generic decoding.
    static func appendTextEdits(ofGroup group: Data, to edits: inout [TextEdit], others: inout [Operation]) -> Bool

    /// The operation that makes `edit` in the model's text, as ``textEdits(of:)`` would read it back; `nil` when
    /// the model has none (the default). An undo of edits that other devices' edits came after or between is made
    /// of such operations: the edits that take back exactly what the step's changes did
    /// (`TextEventGraph.reversal(of:)`). A model without them undoes at the positions its step recorded. A model
    /// gives an operation for every edit or for none.
    static func textOperation(_ edit: TextEdit) -> Operation?

    /// Whether `versions` changed a part other than the text differently from `base` (the same image replaced with
    /// different bytes, say): those merge from their states, so that nothing is lost without a person's choice.
    static func otherPartsDiverge(base: Self, versions: [Self]) -> Bool

    /// This model with the parts beside its text that `new` changes from `old` taken from `new`, and its other parts
    /// kept: what a baseline or a resolution with contents `new`, made on the state `old`, does to the parts beside
    /// the text when the replay meets it among changes made apart from it. The text is the graph's and may be left as
    /// it is.
    func applyingOtherParts(changedFrom old: Self, to new: Self) -> Self

    /// Where a conflict of the text is, as `MergeConflict.location` names it, from `location` in the text
    /// (``TextOverlap/location``, such as `line 3, characters 5–8`): the location itself for a model that is its
    /// text, or with the part that holds the text named first.
    static func textConflictLocation(_ location: String) -> String

    /// Whether the model has parts beside its text. When it has none, a merge asks nothing of
    /// ``otherPartsDiverge(base:versions:)`` and the versions' common ancestor is not replayed for it.
    static var hasPartsBesideText: Bool { get }
}

extension CharacterMergeable {
    /// ``mergeableText``'s count.
    public var mergeableTextCount: Int { mergeableText.count }
    /// A model with nothing beside its text never diverges elsewhere.
    public static func otherPartsDiverge(base: Self, versions: [Self]) -> Bool { false }

    /// The edits of ``textEdits(of:)``.
    public static func appendTextEdits(of operation: Operation, to edits: inout [TextEdit]) -> Bool {
        guard let made = textEdits(of: operation) else { return false }
        edits += made
        return true
    }

    /// Each operation through ``appendTextEdits(of:to:)``.
    public static func appendTextEdits(
        of operations: [Operation], to edits: inout [TextEdit], others: inout [Operation]
    ) {
        for operation in operations where !appendTextEdits(of: operation, to: &edits) { others.append(operation) }
    }

    /// The operations `DocumentOperation.decodeGroup(_:)` reads, through ``appendTextEdits(of:to:)``.
    public static func appendTextEdits(ofGroup group: Data, to edits: inout [TextEdit], others: inout [Operation])
        -> Bool
    {
        guard let operations = try? Operation.decodeGroup(group) else { return false }
        for operation in operations where !appendTextEdits(of: operation, to: &edits) { others.append(operation) }
        return true
    }

    /// No operation: undo uses the positions its step recorded.
    public static func textOperation(_ edit: TextEdit) -> Operation? { nil }

    /// The location in the text names the conflict.
    public static func textConflictLocation(_ location: String) -> String { location }

    /// The parts beside the text are `new`'s: a model that has such parts says how they change one by one.
    public func applyingOtherParts(changedFrom old: Self, to new: Self) -> Self { new }

    /// A model may have other parts unless it says it has none.
    public static var hasPartsBesideText: Bool { true }
}
