import FolioCore
import FolioMerge
import Foundation

extension TextDocument {
    /// The lines inserted, deleted or replaced since `ancestor` (``difference(from:)``), in line order.
    public func changes(from ancestor: TextDocument) -> [ContentChange] {
        difference(from: ancestor).changes.map { ContentChange($0, prefix: "") }
    }
}

extension RecordsDocument {
    /// One change per field added, removed or changed since `ancestor`, located `record.field`: the ancestor's
    /// records in order, then the added ones.
    public func changes(from ancestor: RecordsDocument) -> [ContentChange] {
        difference(from: ancestor).records.flatMap { record in
            record.fields.map { field in
                ContentChange(
                    location: "\(record.id).\(field.key)", kind: ContentChange.Kind(field.kind),
                    base: field.base.map { [$0] } ?? [], version: field.version.map { [$0] } ?? [])
            }
        }
    }
}

extension PagesDocument {
    /// The text's line changes (located in `text.txt`), then the images added, removed or replaced, by name.
    public func changes(from ancestor: PagesDocument) -> [ContentChange] {
        let difference = difference(from: ancestor)
        return difference.text.changes.map { ContentChange($0, prefix: "\(Self.textMember) ") }
            + difference.images.map { image in
                ContentChange(
                    location: "\(Self.imagesMember)/\(image.key)", kind: ContentChange.Kind(image.kind),
                    base: image.base.map { [Self.imageSummary($0)] } ?? [],
                    version: image.version.map { [Self.imageSummary($0)] } ?? [])
            }
    }
}

extension ContentChange {
    init(_ change: LineChange, prefix: String) {
        let kind: Kind =
            switch change.kind {
            case .inserted: .added
            case .deleted: .removed
            case .changed: .changed
            }
        self.init(location: prefix + change.location, kind: kind, base: change.removed, version: change.inserted)
    }
}

extension ContentChange.Kind {
    init<Value>(_ kind: FieldChange<Value>.Kind) {
        self =
            switch kind {
            case .added: .added
            case .removed: .removed
            case .changed: .changed
            }
    }
}
