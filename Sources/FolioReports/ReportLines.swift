import FolioCore
import FolioDocuments
import FolioModels
import Foundation

/// A model that can show its contents in a report as lines of text.
///
/// The built-in models conform; a model that does not is shown by a one-line summary of its snapshot (its size and
/// hash), so any document can be reported.
public protocol ReportLineRendering: DocumentModel {
    /// The contents as lines, without line terminators.
    func reportLines() -> [String]
}

extension TextDocument: ReportLineRendering {
    /// The text's lines.
    public func reportLines() -> [String] { ReportLines.lines(of: text) }
}

extension RecordsDocument: ReportLineRendering {
    /// One line per record, in order: `r1: name=Ann, city=Oslo`, fields by name.
    public func reportLines() -> [String] {
        records.map { record in
            "\(record.id): " + record.fieldNames.map { "\($0)=\(record.fields[$0]!)" }.joined(separator: ", ")
        }
    }
}

extension PagesDocument: ReportLineRendering {
    /// The text's lines, then `images/NAME: SIZE bytes, sha256 HEX` per image, by name.
    public func reportLines() -> [String] {
        ReportLines.lines(of: text) + imageNames.map { "images/\($0): \(Self.imageSummary(images[$0]!))" }
    }
}

/// Turning contents and differences into the report's lines.
enum ReportLines {
    /// The lines of `text` without their `\n`; a final line without one is kept, an empty text has none.
    static func lines(of text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// `model`'s lines: its own rendering, or a summary of its snapshot.
    static func contents<Model: DocumentModel>(of model: Model) -> [String] {
        if let rendering = model as? any ReportLineRendering { return rendering.reportLines() }
        let bytes = model.contents().encoded()
        return ["\(bytes.count) bytes, sha256 \(ContentHash(hashing: bytes).hex.prefix(12))"]
    }

    /// A model's difference, lines trimmed of their terminators.
    static func entry(_ change: ContentChange) -> ChangeEntry {
        ChangeEntry(
            kind: change.kind.rawValue, location: change.location, base: change.base.map(trimmed),
            version: change.version.map(trimmed))
    }

    private static func trimmed(_ line: String) -> String {
        line.hasSuffix("\n") ? String(line.dropLast()) : line
    }

    /// The names of the set flags, or `["normal"]`.
    static func flags(_ state: DocumentState) -> [String] {
        let names = [
            (DocumentState.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
            (.editingDisabled, "editingDisabled"), (.progressAvailable, "progressAvailable"),
        ].filter { state.contains($0.0) }.map(\.1)
        return names.isEmpty ? ["normal"] : names
    }

    /// `userChoice`, `latestWins`, `merge`, `appMerge`, `keepBoth` or `custom:NAME`.
    static func name(of strategy: Resolution.Strategy) -> String {
        switch strategy {
        case .userChoice: "userChoice"
        case .latestWins: "latestWins"
        case .merge: "merge"
        case .appMerge: "appMerge"
        case .keepBoth: "keepBoth"
        case .custom(let name): "custom:\(name)"
        }
    }

    /// What a change does, as the graph names it.
    static func kind(of change: Change) -> String {
        switch change.kind {
        case .edit(let edit):
            switch edit.intent {
            case .edit: "edit"
            case .undo: "undo"
            case .redo: "redo"
            }
        case .lifecycle(let event):
            switch event {
            case .create: "create"
            case .rename: "rename"
            case .move: "move"
            case .delete: "delete"
            case .restore: "restore"
            case .markVersion: "markVersion"
            }
        case .baseline: "baseline"
        case .resolution(let resolution): "resolution(\(name(of: resolution.strategy)))"
        }
    }
}
