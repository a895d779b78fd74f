import Foundation

/// A model that can merge competing versions from their common ancestor.
public protocol MergeableDocumentModel: DocumentModel {
    /// Merges `versions` (two or more) made apart from `base`.
    static func merge(base: Self, versions: [Self]) -> MergeResult<Self>
}
