import FolioModels

extension Scenario {
    /// One edit, in the scenario file's vocabulary; each belongs to one model, except `insert` and `delete`, which
    /// edit the text of a text document and of a pages document alike.
    ///
    /// Positions and counts are in Unicode scalars. `putImage` gives a size, not bytes: the run derives the bytes
    /// from the seed, the name and a counter, so a scenario file stays small and the run stays reproducible.
    public enum Operation: Hashable, Sendable {
        /// Text and pages: `insert: {at, text}`.
        case insert(at: Int, text: String)
        /// Text and pages: `delete: {at, count}`.
        case delete(at: Int, count: Int)
        /// Text: `append: "text"`.
        case append(String)
        /// Text: `replace: "whole text"`.
        case replace(String)
        /// Records: `add: {record, fields: {name: Ann}}`.
        case add(record: String, fields: [String: String])
        /// Records: `set: {record, field, value}`.
        case set(record: String, field: String, value: String)
        /// Records: `remove: {record}`.
        case remove(record: String)
        /// Pages: `setText: "..."`.
        case setText(String)
        /// Pages: `putImage: {name, bytes}`, with `bytes` the image's size.
        case putImage(name: String, bytes: Int)
        /// Pages: `removeImage: {name}`.
        case removeImage(name: String)

        /// The models whose documents the operation edits, in the order of `Model.allCases`: one model, or text and
        /// pages for `insert` and `delete`.
        public var models: [Model] {
            switch self {
            case .insert, .delete: [.text, .pages]
            case .append, .replace: [.text]
            case .add, .set, .remove: [.records]
            case .setText, .putImage, .removeImage: [.pages]
            }
        }

        /// Whether the operation edits documents of `model`.
        public func edits(_ model: Model) -> Bool { models.contains(model) }

        /// The models the operation edits, for messages: `text`, or `text and pages`.
        var modelsDescription: String {
            models.map(\.rawValue).joined(separator: " and ")
        }

        /// The operation's key in a scenario file, such as `insert` or `putImage`.
        public var key: String {
            switch self {
            case .insert: "insert"
            case .delete: "delete"
            case .append: "append"
            case .replace: "replace"
            case .add: "add"
            case .set: "set"
            case .remove: "remove"
            case .setText: "setText"
            case .putImage: "putImage"
            case .removeImage: "removeImage"
            }
        }

        /// The operation keys of each model, in the order `docs/scenarios.md` lists them. `insert` and `delete` are
        /// keys of both text and pages.
        public static func keys(of model: Model) -> [String] {
            switch model {
            case .text: ["insert", "delete", "append", "replace"]
            case .records: ["add", "set", "remove"]
            case .pages: ["insert", "delete", "setText", "putImage", "removeImage"]
            }
        }

        /// Every operation key once, in the order of ``keys(of:)`` over `Model.allCases`.
        static var allKeys: [String] {
            var seen: Set<String> = []
            return Model.allCases.flatMap(keys(of:)).filter { seen.insert($0).inserted }
        }

        /// The same edit as a `TextDocument` operation, or `nil` for another model's operation.
        public var textOperation: TextDocument.Operation? {
            switch self {
            case .insert(let position, let text): .insert(at: position, text: text)
            case .delete(let position, let count): .delete(at: position, count: count)
            case .append(let text): .append(text)
            case .replace(let text): .replace(text)
            default: nil
            }
        }

        /// The same edit as a `RecordsDocument` operation, or `nil` for another model's operation.
        public var recordsOperation: RecordsDocument.Operation? {
            switch self {
            case .add(let record, let fields): .add(record: record, fields: fields)
            case .set(let record, let field, let value): .set(record: record, field: field, value: value)
            case .remove(let record): .remove(record: record)
            default: nil
            }
        }
    }
}
