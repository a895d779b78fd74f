import FolioCore
import FolioMerge

extension RecordsDocument: MergeableDocumentModel {
    /// Merges versions record by record and field by field (`FieldMerge`).
    ///
    /// - Fields: a field changed in one version is taken; the same change in several is taken once; different values
    ///   conflict at `ID.FIELD` (the merged record keeps the first editing version's value); a field edited in one
    ///   version and removed in another keeps the edit.
    /// - Records: one removed in some versions and left alone by the others is removed; one removed in some versions
    ///   and edited in others is kept with the edits ("edit beats remove"); one added by several versions is merged
    ///   field by field from no fields.
    /// - Order: the ancestor's records in its order, then the records the versions added, version by version, each
    ///   in that version's order. Moving a record is not merged: records keep the ancestor's order.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*V* · *F* log *F*) for *V* versions and *F* fields in all.
    public static func merge(base: RecordsDocument, versions: [RecordsDocument]) -> MergeResult<RecordsDocument> {
        precondition(!versions.isEmpty, "a merge needs at least one version")
        var records: [Record] = []
        var conflicts: [MergeConflict] = []
        for id in mergeOrder(base: base, versions: versions) {
            let original = base[id]
            let keeping = versions.indices.filter { versions[$0][id] != nil }
            if let original {
                let edited = keeping.contains { !versions[$0][id]!.fields.isIdentical(to: original.fields) }
                // Removed somewhere and edited nowhere: the removal stands.
                if keeping.count < versions.count && !edited { continue }
            }
            // Versions that removed the record take no part in its fields, so the editors' values win.
            let result = FieldMerge.merge(
                base: original?.fields ?? [:], versions: keeping.map { versions[$0][id]!.fields }, by: identical)
            let storedID = original?.id ?? versions[keeping[0]][id]!.id
            records.append(Record(id: storedID, fields: result.merged))
            for conflict in result.conflicts {
                var values = [String?](repeating: nil, count: versions.count)
                for (slot, version) in keeping.enumerated() { values[version] = conflict.values[slot] }
                conflicts.append(
                    MergeConflict(location: "\(storedID).\(conflict.key)", base: conflict.base, values: values))
            }
        }
        // The ids come from documents with unique ids, each listed once, so they stay unique.
        return MergeResult(merged: try! RecordsDocument(records: records), conflicts: conflicts)
    }

    /// Field values are the same when their scalars are, as the model's own equality has it.
    private static func identical(_ left: String, _ right: String) -> Bool { left.isIdentical(to: right) }

    /// The ids of the ancestor in order, then those the versions added, in version order, each once.
    private static func mergeOrder(base: RecordsDocument, versions: [RecordsDocument]) -> [String] {
        var order = base.ids
        // Membership only (ids match as the model's own index does); the order comes from the arrays.
        var seen = Set(order)
        for version in versions {
            for id in version.ids where seen.insert(id).inserted { order.append(id) }
        }
        return order
    }

    /// How this list differs from `base`, record by record: what a conflict report shows for a competing version.
    ///
    /// - Complexity: O(*F* log *F*) for *F* fields in all.
    public func difference(from base: RecordsDocument) -> Difference {
        var changes: [RecordChange] = []
        for original in base.records {
            guard let record = self[original.id] else {
                let fields = FieldMerge.changes(from: original.fields, to: [:], by: Self.identical)
                changes.append(RecordChange(id: original.id, kind: .removed, fields: fields))
                continue
            }
            let fields = FieldMerge.changes(from: original.fields, to: record.fields, by: Self.identical)
            if !fields.isEmpty { changes.append(RecordChange(id: original.id, kind: .edited, fields: fields)) }
        }
        for record in records where base[record.id] == nil {
            let fields = FieldMerge.changes(from: [:], to: record.fields, by: Self.identical)
            changes.append(RecordChange(id: record.id, kind: .added, fields: fields))
        }
        return Difference(records: changes)
    }
}
