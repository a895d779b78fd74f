extension RecordsDocument {
    /// One record: an id, unique in its document, and string fields by name.
    ///
    /// Equality compares the id, the field names and the values scalar by scalar (not by canonical equivalence as
    /// `String` does), because the snapshot writes those scalars.
    public struct Record: Hashable, Sendable, CustomStringConvertible {
        /// The record's id, unique in its document.
        public let id: String
        /// The fields, by name.
        public var fields: [String: String]

        /// A record with these fields.
        public init(id: String, fields: [String: String] = [:]) {
            self.id = id
            self.fields = fields
        }

        /// The value of the field `name`, if the record has it.
        public subscript(name: String) -> String? { fields[name] }

        /// The field names, in order by scalars.
        public var fieldNames: [String] { fields.keys.sorted { $0.precedesByScalars($1) } }

        /// `id {name: value, …}` with the fields in name order.
        public var description: String {
            let pairs = fields.sortedByScalars.map { "\($0.key): \($0.value.debugDescription)" }
            return "\(id) {\(pairs.joined(separator: ", "))}"
        }

        /// Whether both have the same id and fields, spelled with the same scalars.
        public static func == (lhs: Record, rhs: Record) -> Bool {
            lhs.id.isIdentical(to: rhs.id) && lhs.fields.isIdentical(to: rhs.fields)
        }

        /// Hashes the id and the fields (consistent with ``==(_:_:)``, which is stricter than `String`'s).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(fields)
        }
    }
}
