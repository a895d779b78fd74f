import FolioCore

extension RecordsDocument {
    /// One edit of a records document.
    ///
    /// `add`, `set` and `remove` are the edits people make. `insert` and `unset` exist so that every edit has an
    /// exact inverse: `insert` puts a removed record back at its old place (the inverse of `remove`), and `unset`
    /// takes away a field that `set` created (the inverse of `set` on a field the record did not have).
    ///
    /// Binary form: a tag byte, then length-prefixed UTF-8 strings; a field map is a varint count followed by
    /// name–value pairs in strictly increasing name order (by UTF-8 bytes), so every map has one encoding; a
    /// position is a varint.
    public enum Operation: DocumentOperation, CustomStringConvertible {
        /// Appends a record; its id must be new.
        case add(record: String, fields: [String: String])
        /// Sets one field of an existing record, creating the field if needed.
        case set(record: String, field: String, value: String)
        /// Removes a record.
        case remove(record: String)
        /// Inserts a record at a position in the list (the inverse of `remove`); its id must be new.
        case insert(record: String, fields: [String: String], at: Int)
        /// Removes one field of a record (the inverse of `set` on a new field); the field must exist.
        case unset(record: String, field: String)

        private enum Tag: UInt8 { case add = 0, set = 1, remove = 2, insert = 3, unset = 4 }

        /// Appends the operation's binary form.
        public func encode(into writer: inout BinaryWriter) {
            switch self {
            case .add(let record, let fields):
                writer.write(byte: Tag.add.rawValue)
                writer.write(string: record)
                Self.write(fields, into: &writer)
            case .set(let record, let field, let value):
                writer.write(byte: Tag.set.rawValue)
                writer.write(string: record)
                writer.write(string: field)
                writer.write(string: value)
            case .remove(let record):
                writer.write(byte: Tag.remove.rawValue)
                writer.write(string: record)
            case .insert(let record, let fields, let position):
                writer.write(byte: Tag.insert.rawValue)
                writer.write(string: record)
                Self.write(fields, into: &writer)
                writer.write(position: position)
            case .unset(let record, let field):
                writer.write(byte: Tag.unset.rawValue)
                writer.write(string: record)
                writer.write(string: field)
            }
        }

        /// Reads an operation written by ``encode(into:)`` from untrusted bytes.
        ///
        /// - Throws: `CodecError`: `truncated` when the input ends early, `invalidValue` for an unknown tag or text
        ///   that is not UTF-8, `notCanonical` for field names out of order or repeated.
        public init(from reader: inout BinaryReader) throws {
            let names = ModelLimits.nameBytes
            switch try reader.readOperationTag(of: "records") as Tag {
            case .add:
                let record = try reader.nextString("a record id", limit: names)
                self = .add(record: record, fields: try Self.readFields(&reader))
            case .set:
                let record = try reader.nextString("a record id", limit: names)
                let field = try reader.nextString("a field name", limit: names)
                self = .set(
                    record: record, field: field,
                    value: try reader.nextString("a field value", limit: ModelLimits.payloadBytes))
            case .remove:
                self = .remove(record: try reader.nextString("a record id", limit: names))
            case .insert:
                let record = try reader.nextString("a record id", limit: names)
                let fields = try Self.readFields(&reader)
                self = .insert(record: record, fields: fields, at: try reader.readPosition("an insertion position"))
            case .unset:
                let record = try reader.nextString("a record id", limit: names)
                self = .unset(record: record, field: try reader.nextString("a field name", limit: names))
            }
        }

        private static func write(_ fields: [String: String], into writer: inout BinaryWriter) {
            writer.write(varint: UInt64(fields.count))
            for (name, value) in fields.sortedByScalars {
                writer.write(string: name)
                writer.write(string: value)
            }
        }

        private static func readFields(_ reader: inout BinaryReader) throws(CodecError) -> [String: String] {
            let count = try reader.nextCount("the field count", elementSize: 2, limit: ModelLimits.fields)
            var fields: [String: String] = [:]
            fields.reserveCapacity(count)
            var previous: String?
            for _ in 0..<count {
                let offset = reader.offset
                let name = try reader.nextString("a field name", limit: ModelLimits.nameBytes)
                let value = try reader.nextString("a field value", limit: ModelLimits.payloadBytes)
                if let previous, !previous.precedesByScalars(name) {
                    throw CodecError(
                        .notCanonical, "field \(name.debugDescription) is out of order or repeated", at: offset)
                }
                // Distinct byte strings can still be one dictionary key (canonically equivalent spellings).
                guard fields.updateValue(value, forKey: name) == nil else {
                    throw CodecError(
                        .notCanonical, "field \(name.debugDescription) repeats an equivalent name", at: offset)
                }
                previous = name
            }
            return fields
        }

        /// The operation in the scenario files' words, such as `set r1.name = "Ann"`.
        public var description: String {
            func list(_ fields: [String: String]) -> String {
                "{" + fields.sortedByScalars.map { "\($0.key): \($0.value.debugDescription)" }.joined(separator: ", ")
                    + "}"
            }
            return switch self {
            case .add(let record, let fields): "add \(record) \(list(fields))"
            case .set(let record, let field, let value): "set \(record).\(field) = \(value.debugDescription)"
            case .remove(let record): "remove \(record)"
            case .insert(let record, let fields, let position): "insert \(record) \(list(fields)) at \(position)"
            case .unset(let record, let field): "unset \(record).\(field)"
            }
        }

        /// Whether both are the same operation, with every text equal scalar for scalar: whether their binary forms
        /// are equal.
        public static func == (lhs: Operation, rhs: Operation) -> Bool { lhs.binaryForm == rhs.binaryForm }

        /// Hashes the binary form (consistent with ``==(_:_:)``, which is stricter than `String`'s).
        public func hash(into hasher: inout Hasher) { hasher.combine(binaryForm) }
    }
}
