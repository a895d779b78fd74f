import FolioCore

/// What the conflict engine asks its owner to do about competing versions (``ConflictEngine/nextAction(hasResolver:in:displayName:devices:)``).
public enum ConflictAction<Model: DocumentModel>: Sendable {
    /// Record the settlement: create its copies, append its resolution on its parents, show its state.
    case settle(ConflictSettlement<Model>)
    /// Leave the conflict open for a person. After a merge that left parts in conflict, what merged and the parts
    /// that did not; `nil` otherwise.
    case awaitUser(unmerged: MergeResult<Model>?)
    /// Call the app's own resolver with the versions, then settle with its contents
    /// (``ConflictEngine/settlement(with:)``).
    case askResolver
}
