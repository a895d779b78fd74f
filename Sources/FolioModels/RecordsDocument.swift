import FolioCore
import Foundation

/// An ordered list of records, each with a unique id and string fields, saved as a flat JSON file.
///
/// The snapshot is deterministic JSON, keys sorted by Unicode scalars, compact, with a trailing newline:
/// `{"records":[{"fields":{"name":"Ann"},"id":"r1"}]}`. Records keep the order they were added in.
///
/// Ids and field names are looked up as `String` dictionary keys, so two canonically equivalent spellings
/// (`"é"`, `"e\u{301}"`) name the same record or field; the spelling first used is the one kept and saved.
public struct RecordsDocument: DocumentModel, Hashable, Sendable {
    /// Records (`com.folio.records`, conforming to `public.json`), extension `folio-records`, a flat file.
    public static let documentType = DocumentType.records

    /// The records, in order.
    public private(set) var records: [Record]
    /// Each record's index in `records`, by id.
    private var indexByID: [String: Int]

    /// An empty list.
    public init() {
        records = []
        indexByID = [:]
    }

    /// A document holding `records`, in this order.
    ///
    /// - Throws: `ModelError` `invalidContents` when two records share an id.
    public init(records: [Record]) throws {
        self.init()
        for record in records {
            guard indexByID[record.id] == nil else {
                throw ModelError(.invalidContents, "the record id \(record.id.debugDescription) appears twice")
            }
            indexByID[record.id] = self.records.count
            self.records.append(record)
        }
    }

    /// The record with this id, if any.
    ///
    /// - Complexity: O(1) on average.
    public subscript(id: String) -> Record? {
        indexByID[id].map { records[$0] }
    }

    /// The records' ids, in order.
    public var ids: [String] { records.map(\.id) }

    // MARK: Snapshots

    /// The JSON snapshot.
    ///
    /// - Complexity: O(*n* log *n*) in the number of fields (each record's fields are sorted).
    public func contents() -> DocumentContents {
        let list = records.map { record in
            JSONValue.object(sorting: [
                "fields": .object(sorting: record.fields.mapValues { JSONValue.string($0) }),
                "id": .string(record.id),
            ])
        }
        return .data(Data(JSONValue.object(sorting: ["records": .array(list)]).serialized.utf8))
    }

    /// Loads a JSON snapshot of exactly the shape ``contents()`` writes (any whitespace).
    ///
    /// - Throws: `ModelError` `invalidContents` for a package, bytes that are not UTF-8 JSON, any other shape
    ///   (missing or extra keys, values that are not strings) or a repeated record id.
    public init(contents: DocumentContents) throws {
        func invalid(_ message: String) -> ModelError {
            ModelError(.invalidContents, "the records file is not valid: \(message)")
        }
        guard case .data(let data) = contents else {
            throw ModelError(.invalidContents, "a records document is a flat file, not a package")
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw invalid("it is not UTF-8") }
        let root: JSONValue
        do throws(JSONValue.ParseError) {
            root = try JSONValue(parsing: text)
        } catch {
            throw invalid(error.message)
        }
        guard let top = root.members, top.count == 1, case .array(let list)? = top["records"] else {
            throw invalid("expected an object whose only key is \"records\", holding an array")
        }
        var records: [Record] = []
        records.reserveCapacity(list.count)
        for (index, element) in list.enumerated() {
            guard let members = element.members, members.count == 2,
                case .string(let id)? = members["id"], case .object(let fieldMembers)? = members["fields"]
            else {
                throw invalid(
                    "record \(index) is not an object of exactly \"fields\" (an object) and \"id\" (a string)")
            }
            var fields: [String: String] = [:]
            // In key order, so the field an error names does not depend on dictionary order.
            for (name, value) in fieldMembers {
                guard case .string(let text) = value else {
                    throw invalid("field \(name.debugDescription) of record \(id.debugDescription) is not a string")
                }
                fields[name] = text
            }
            records.append(Record(id: id, fields: fields))
        }
        try self.init(records: records)
    }

    // MARK: Editing

    /// Applies one edit and returns the edit that undoes it.
    ///
    /// Inverses: `add` → `remove`; `remove` → `insert` at the old position; `insert` → `remove`; `set` of an existing
    /// field → `set` of the old value; `set` of a new field → `unset`; `unset` → `set` of the old value.
    ///
    /// - Complexity: O(1) on average for `add` and `set`, O(*n*) for `remove` and `insert` (the records after the
    ///   position move).
    /// - Throws: `ModelError` `invalidOperation` when `add` or `insert` names an existing id, `set`, `remove` or
    ///   `unset` an unknown record, `unset` a field the record lacks, or `insert` a position outside the list; the
    ///   document is then unchanged.
    public mutating func apply(_ operation: Operation) throws -> Operation {
        switch operation {
        case .add(let id, let fields):
            try requireNew(id)
            indexByID[id] = records.count
            records.append(Record(id: id, fields: fields))
            return .remove(record: id)
        case .insert(let id, let fields, let position):
            try requireNew(id)
            guard position >= 0 && position <= records.count else {
                throw ModelError(
                    .invalidOperation,
                    "cannot insert record \(id.debugDescription) at \(position): there are \(records.count) records")
            }
            records.insert(Record(id: id, fields: fields), at: position)
            reindex(from: position)
            return .remove(record: id)
        case .remove(let id):
            let index = try existingIndex(id)
            let record = records.remove(at: index)
            indexByID[id] = nil
            reindex(from: index)
            return .insert(record: record.id, fields: record.fields, at: index)
        case .set(let id, let field, let value):
            let index = try existingIndex(id)
            // Update in place when the field exists, so its stored spelling (and thus the inverse) stays exact.
            if let slot = records[index].fields.index(forKey: field) {
                let (name, old) = records[index].fields[slot]
                records[index].fields.values[slot] = value
                return .set(record: records[index].id, field: name, value: old)
            }
            records[index].fields[field] = value
            return .unset(record: records[index].id, field: field)
        case .unset(let id, let field):
            let index = try existingIndex(id)
            guard let slot = records[index].fields.index(forKey: field) else {
                throw ModelError(
                    .invalidOperation,
                    "record \(id.debugDescription) has no field \(field.debugDescription) to unset")
            }
            let (name, old) = records[index].fields.remove(at: slot)
            return .set(record: records[index].id, field: name, value: old)
        }
    }

    /// Combines edits of one record made in a row.
    ///
    /// - `set(r, f, a)` then `set(r, f, b)` → `set(r, f, b)`;
    /// - `add(r, fields)` (or `insert`) then `set(r, f, v)` → `add(r, fields with f = v)` (or `insert`).
    ///
    /// The result applies exactly when both do, with the same effect. Any other pair gives `nil`.
    public static func combine(_ first: Operation, _ second: Operation) -> Operation? {
        switch (first, second) {
        case (.set(let record, let field, _), .set(let otherRecord, let otherField, let value))
        where record == otherRecord && field == otherField:
            return .set(record: record, field: field, value: value)
        case (.add(let record, let fields), .set(let otherRecord, let field, let value)) where record == otherRecord:
            return .add(record: record, fields: fields.setting(field, to: value))
        case (.insert(let record, let fields, let position), .set(let otherRecord, let field, let value))
        where record == otherRecord:
            return .insert(record: record, fields: fields.setting(field, to: value), at: position)
        default:
            return nil
        }
    }

    private func requireNew(_ id: String) throws(ModelError) {
        guard indexByID[id] == nil else {
            throw ModelError(.invalidOperation, "a record with id \(id.debugDescription) already exists")
        }
    }

    private func existingIndex(_ id: String) throws(ModelError) -> Int {
        guard let index = indexByID[id] else {
            throw ModelError(.invalidOperation, "there is no record with id \(id.debugDescription)")
        }
        return index
    }

    private mutating func reindex(from start: Int) {
        for index in start..<records.count { indexByID[records[index].id] = index }
    }

    /// Traps when the id index disagrees with the list; for tests.
    public func _checkInvariants() {
        precondition(
            indexByID.count == records.count, "the id index has \(indexByID.count) entries for \(records.count) records"
        )
        for (index, record) in records.enumerated() {
            precondition(
                indexByID[record.id] == index, "record \(record.id.debugDescription) is not indexed at \(index)")
        }
    }

    // MARK: Equality

    /// Whether both hold the same records in the same order, compared scalar for scalar.
    public static func == (lhs: RecordsDocument, rhs: RecordsDocument) -> Bool {
        lhs.records == rhs.records
    }

    /// Hashes the records.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(records)
    }
}

extension Dictionary where Key == String, Value == String {
    /// A copy with `field` set to `value`, keeping the stored spelling of an existing key (as `set` does).
    fileprivate func setting(_ field: String, to value: String) -> [String: String] {
        var copy = self
        if let slot = copy.index(forKey: field) {
            copy.values[slot] = value
        } else {
            copy[field] = value
        }
        return copy
    }
}
