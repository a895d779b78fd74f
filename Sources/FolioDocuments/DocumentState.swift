/// What a document is doing, as an option set: empty means normal (open, editable, saved or saving fine).
///
/// The same states as UIDocument's `documentState`; watch ``Document/stateChanges`` to follow them.
public struct DocumentState: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw bits.
    public let rawValue: Int

    /// Creates a state from raw bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The document is closed: it must be opened again to be read or edited.
    public static let closed = DocumentState(rawValue: 1 << 0)
    /// Competing versions exist and have not been resolved.
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    /// The last save failed; edits are safe in the log and the next save rewrites the file from it.
    public static let savingError = DocumentState(rawValue: 1 << 2)
    /// Edits are refused for now (the document is deleted, or being reverted).
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    /// A long operation reports progress.
    public static let progressAvailable = DocumentState(rawValue: 1 << 4)

    /// The normal state.
    public static let normal: DocumentState = []

    /// The set flags' names, such as `[inConflict, savingError]`, or `normal`.
    public var description: String {
        let names = [
            (DocumentState.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
            (.editingDisabled, "editingDisabled"), (.progressAvailable, "progressAvailable"),
        ].filter { contains($0.0) }.map(\.1)
        return names.isEmpty ? "normal" : "[" + names.joined(separator: ", ") + "]"
    }
}
