/// One positional edit of a text, in Unicode scalars of the text it is made on.
///
/// What a ``TextEventGraph`` replays. Positions are relative to the text as the event's author saw it: the text
/// at the event's parents with the event's earlier edits applied.
public enum TextEdit: Hashable, Sendable {
    /// Inserts `scalars` before the scalar at `position` (`position` may equal the length: the end).
    case insert(at: Int, scalars: [Unicode.Scalar])
    /// Inserts `scalars` at the end of the text.
    case append(scalars: [Unicode.Scalar])
    /// Deletes `count` scalars from `position` on.
    case delete(at: Int, count: Int)
    /// Replaces the whole text with `scalars`, merged as one edit of the part that differs: the scalars the old
    /// and new text share at the start and at the end stay, the rest of the old text is deleted and the rest of the
    /// new one inserted.
    case replaceAll(with: [Unicode.Scalar])

    /// Inserts `text`'s scalars at `position`.
    public static func insert(at position: Int, text: String) -> TextEdit {
        .insert(at: position, scalars: Array(text.unicodeScalars))
    }

    /// What replacing `old` with `new` does, as ``replaceAll(with:)`` reads it: the part between their common start
    /// and common end deleted, then `new`'s part typed there (either left out when empty).
    public static func splice(from old: [Unicode.Scalar], to new: [Unicode.Scalar]) -> [TextEdit] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
            old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
        {
            suffix += 1
        }
        var edits: [TextEdit] = []
        if old.count - prefix - suffix > 0 { edits.append(.delete(at: prefix, count: old.count - prefix - suffix)) }
        if new.count - prefix - suffix > 0 {
            edits.append(.insert(at: prefix, scalars: Array(new[prefix..<(new.count - suffix)])))
        }
        return edits
    }
}
