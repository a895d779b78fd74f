import FolioCore
import FolioMerge
import Foundation

extension TextDocument: MergeableDocumentModel {
    /// Merges versions line by line (`Diff3`).
    ///
    /// Changes to separate lines combine; the same change made in several versions is taken once; lines changed
    /// differently stay in conflict, with the first version's lines in the merged text and a `MergeConflict` at
    /// `line 3`, `lines 3–5`, `after line 2` or `at the start` (lines of `base`, 1-based). Lines keep their
    /// terminators, so a text without a final newline keeps it that way.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*V* · (*N* + *M*) · *D*) for *V* versions of about *N* lines, *D* lines changed.
    public static func merge(base: TextDocument, versions: [TextDocument]) -> MergeResult<TextDocument> {
        let result = Diff3.merge(base: base.text, versions: versions.map(\.text))
        return MergeResult(merged: TextDocument(text: result.text), conflicts: result.mergeConflicts())
    }

    /// How this text differs from `base`, line by line: what a conflict report shows for a competing version.
    ///
    /// - Complexity: O((*N* + *M*) · *D*); see `LineDiff`.
    public func difference(from base: TextDocument) -> TextDiff {
        TextDiff(base: base.text, version: text)
    }
}

extension TextDocument: CharacterMergeable {
    /// The text's scalars.
    ///
    /// - Complexity: O(*n*).
    public var mergeableText: [Unicode.Scalar] { storage.scalars }
    /// The text's scalar count, without building the text.
    public var mergeableTextCount: Int { storage.count }

    /// A document holding `text`.
    public func replacingMergeableText(with text: String) -> TextDocument {
        TextDocument(text: text)
    }

    /// A text document is its text.
    public static var hasPartsBesideText: Bool { false }

    /// Every operation is a text edit: `replace` is merged as the edit of the part that differs
    /// (`TextEdit.replaceAll(with:)`).
    public static func textEdits(of operation: Operation) -> [TextEdit]? {
        [textEdit(of: operation)]
    }

    /// The operation of each text edit: an insert, a delete, an append, a replacement of the whole text.
    public static func textOperation(_ edit: TextEdit) -> Operation? {
        switch edit {
        case .insert(let position, let scalars): .insert(at: position, text: String(String.UnicodeScalarView(scalars)))
        case .append(let scalars): .append(String(String.UnicodeScalarView(scalars)))
        case .delete(let position, let count): .delete(at: position, count: count)
        case .replaceAll(let scalars): .replace(String(String.UnicodeScalarView(scalars)))
        }
    }

    /// The one text edit `operation` makes, added to `edits` without an array of its own.
    public static func appendTextEdits(of operation: Operation, to edits: inout [TextEdit]) -> Bool {
        edits.append(textEdit(of: operation))
        return true
    }

    /// Each operation's one text edit, in one pass. Every operation is a text edit.
    public static func appendTextEdits(
        of operations: [Operation], to edits: inout [TextEdit], others: inout [Operation]
    ) {
        edits.reserveCapacity(edits.count + operations.count)
        for operation in operations { edits.append(textEdit(of: operation)) }
    }

    /// The group's operations, decoded as `DocumentOperation.decodeGroup(_:)` does (a count, then the operations,
    /// to the end of the bytes), each one's text edit added to `edits`. Every operation is a text edit.
    public static func appendTextEdits(ofGroup group: Data, to edits: inout [TextEdit], others: inout [Operation])
        -> Bool
    {
        let start = edits.count
        let decoded = group.withUnsafeBytes { buffer in
            var reader = BinaryReader(buffer)
            guard let count = try? reader.nextCount("the operation count", elementSize: 1, limit: 1 << 26) else {
                return false
            }
            edits.reserveCapacity(start + min(count, 1024))
            for _ in 0..<count {
                guard let operation = try? Operation(from: &reader) else { return false }
                edits.append(textEdit(of: operation))
            }
            return reader.isAtEnd
        }
        if !decoded { edits.removeSubrange(start...) }
        return decoded
    }

    private static func textEdit(of operation: Operation) -> TextEdit {
        switch operation {
        case .insert(let position, let text):
            // One ASCII character, as typing makes: its scalar without iterating the string.
            if text.utf8.count == 1, let byte = text.utf8.first {
                .insert(at: position, scalars: [Unicode.Scalar(byte)])
            } else {
                .insert(at: position, text: text)
            }
        case .delete(let position, let count): .delete(at: position, count: count)
        case .append(let text): .append(scalars: Array(text.unicodeScalars))
        case .replace(let text): .replaceAll(with: Array(text.unicodeScalars))
        }
    }
}
