import FolioMerge

extension RecordsDocument {
    /// How a version of a records document differs from its ancestor, record by record.
    ///
    /// Records come in the ancestor's order (edited and removed ones), then the added ones in the version's order;
    /// each record's fields are sorted by name (by Unicode scalars). Record positions are not compared.
    public struct Difference: Hashable, Sendable, CustomStringConvertible {
        /// The records added, removed or edited.
        public var records: [RecordChange]

        /// Creates a difference.
        public init(records: [RecordChange]) {
            self.records = records
        }

        /// Whether the records and their fields are the same.
        public var isEmpty: Bool { records.isEmpty }

        /// One line per record.
        public var summary: [String] { records.map(\.description) }

        /// The summary on one line, or `no changes`.
        public var description: String { isEmpty ? "no changes" : summary.joined(separator: "; ") }
    }

    /// How one record of a version differs from the ancestor.
    public struct RecordChange: Hashable, Sendable, CustomStringConvertible {
        /// What happened to the record.
        public enum Kind: String, Hashable, Sendable {
            /// The ancestor lacks the record; `fields` lists all its fields as added.
            case added
            /// The version lacks the record; `fields` lists all its old fields as removed.
            case removed
            /// Both have the record; `fields` lists the fields added, removed or changed.
            case edited
        }

        /// The record's id.
        public var id: String
        /// Whether the record was added, removed or edited.
        public var kind: Kind
        /// The fields, sorted by name.
        public var fields: [FieldChange<String>]

        /// Creates a record change.
        public init(id: String, kind: Kind, fields: [FieldChange<String>]) {
            self.id = id
            self.kind = kind
            self.fields = fields
        }

        /// One line: `added r3 {name: "Ann"}`, `removed r2 {name: "Bob"}`,
        /// `edited r1: name "Ann" → "Anne", city "Oslo" → ∅`.
        public var description: String {
            func quoted(_ value: String?) -> String { value?.debugDescription ?? "∅" }
            switch kind {
            case .added, .removed:
                let values = fields.map { "\($0.key): \(quoted($0.version ?? $0.base))" }
                return "\(kind.rawValue) \(id) {\(values.joined(separator: ", "))}"
            case .edited:
                let values = fields.map { "\($0.key) \(quoted($0.base)) → \(quoted($0.version))" }
                return "edited \(id): \(values.joined(separator: ", "))"
            }
        }
    }
}
