import FolioCore

/// The library-wide default strategy and overrides per document type; a document can also be given a custom rule
/// (`Document.setConflictResolver(_:)`), which overrides the policy.
public struct ConflictPolicy: Hashable, Sendable {
    /// The strategy for types without an override.
    public var defaultStrategy: ConflictStrategy
    /// Strategies by type identifier.
    public var overrides: [String: ConflictStrategy]

    /// Creates a policy.
    public init(default defaultStrategy: ConflictStrategy = .askUser, overrides: [String: ConflictStrategy] = [:]) {
        self.defaultStrategy = defaultStrategy
        self.overrides = overrides
    }

    /// The strategy for documents of `type`.
    public func strategy(for type: DocumentType) -> ConflictStrategy {
        overrides[type.identifier] ?? defaultStrategy
    }
}
