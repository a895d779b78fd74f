import Foundation

/// What a three-way merge produced.
public struct MergeResult<Model: DocumentModel>: Sendable {
    /// The merged state: every part that merged cleanly, and for conflicting parts the first version's value.
    public var merged: Model
    /// The parts still in conflict, for a person to settle; empty when the merge is clean.
    public var conflicts: [MergeConflict]

    /// Creates a result.
    public init(merged: Model, conflicts: [MergeConflict]) {
        self.merged = merged
        self.conflicts = conflicts
    }

    /// Whether everything merged.
    public var isClean: Bool { conflicts.isEmpty }
}
