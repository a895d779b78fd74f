import FolioCore
import FolioMerge

extension Change {
    /// For a resolution, the versions it kept among those it settled: its `chosen` heads that are also its parents,
    /// in ascending order. Empty for any other change, and for a resolution that chose none of its parents.
    ///
    /// A resolution is made on every competing head, so a chosen head that is not a parent is forged or corrupt:
    /// followed, it would show contents from outside the change's past, on the devices that happen to hold them,
    /// and make the document unopenable on the others. It counts for nothing, the same on every device.
    ///
    /// - Complexity: O(chosen + parents).
    public var keptVersions: [ChangeHash] {
        guard case .resolution(let resolution) = kind, !resolution.chosen.isEmpty else { return [] }
        let parents = parents
        // A merge has a few parents: a scan finds one sooner than a set is built.
        guard parents.count > 8 else { return resolution.chosen.filter { parents.contains($0) } }
        let set = Set(parents)
        return resolution.chosen.filter { set.contains($0) }
    }
}

extension Change {
    /// Whether, for a document of `model`, this change is a merge computed from the change graph: a `merge`
    /// resolution without contents that kept some of its parents, or an edit made on the merge of its several
    /// parents (`Edit.isMadeOnMerge`), of a model that merges character by character (`CharacterMergeable`). Its
    /// state is its merged versions (``mergedVersions``) merged, with an edit's operations applied, not any one
    /// version's.
    public func mergesCharacters<Model: DocumentModel>(of model: Model.Type) -> Bool {
        // The kind first: most changes are edits on one parent, and asking the model's conformance takes longer.
        switch kind {
        case .edit(let edit):
            guard edit.isMadeOnMerge, parents.count > 1 else { return false }
        case .resolution(let resolution):
            guard resolution.strategy == .merge, resolution.contents == nil, !keptVersions.isEmpty else { return false }
        case .baseline, .lifecycle:
            return false
        }
        return model is any CharacterMergeable.Type
    }

    /// The versions a merge computed from the change graph (``mergesCharacters(of:)``) merges: all the parents of an
    /// edit made on their merge, the kept versions (``keptVersions``) of a `merge` resolution.
    public var mergedVersions: [ChangeHash] {
        if case .edit = kind { return parents }
        return keptVersions
    }

    /// Whether the change is an edit made on the merge of its several parents (`Edit.isMadeOnMerge`).
    public var isEditMadeOnMerge: Bool {
        guard case .edit(let edit) = kind else { return false }
        return edit.isMadeOnMerge && parents.count > 1
    }
}
