/// How one field (or any named member: an image, a package entry) of a version differs from its ancestor.
public struct FieldChange<Value> {
    /// What happened to the field.
    public enum Kind: String, Hashable, Sendable {
        /// The ancestor lacks the field.
        case added
        /// The version lacks the field.
        case removed
        /// Both have it, with different values.
        case changed
    }

    /// The field's name.
    public var key: String
    /// The ancestor's value (`nil` when absent).
    public var base: Value?
    /// The version's value (`nil` when absent).
    public var version: Value?

    /// Creates a change.
    ///
    /// - Precondition: not both values are `nil`.
    public init(key: String, base: Value?, version: Value?) {
        precondition(base != nil || version != nil, "a field change has a value on at least one side")
        self.key = key
        self.base = base
        self.version = version
    }

    /// Whether the field was added, removed or changed.
    public var kind: Kind {
        if base == nil { return .added }
        if version == nil { return .removed }
        return .changed
    }
}

extension FieldChange: Equatable where Value: Equatable {}
extension FieldChange: Hashable where Value: Hashable {}
extension FieldChange: Sendable where Value: Sendable {}

extension FieldMerge {
    /// The fields `version` adds, removes or changes relative to `base`, sorted by key (by Unicode scalars).
    ///
    /// - Complexity: O(*k* log *k*) for *k* keys in all, plus the comparisons.
    public static func changes<Value>(
        from base: [String: Value], to version: [String: Value], by areEqual: (Value, Value) -> Bool
    ) -> [FieldChange<Value>] {
        sortedKeys(base, [version]).compactMap { key in
            let old = base[key]
            let new = version[key]
            switch (old, new) {
            case (let old?, let new?) where areEqual(old, new): return nil
            case (nil, nil): return nil
            default: return FieldChange(key: key, base: old, version: new)
            }
        }
    }

    /// The fields `version` adds, removes or changes relative to `base`, values compared with `==`, sorted by key.
    ///
    /// `String`'s `==` compares by canonical equivalence; pass a comparison to ``changes(from:to:by:)`` to see
    /// `"é"` → `"e\u{301}"` as a change.
    ///
    /// - Complexity: O(*k* log *k*) for *k* keys in all, plus the comparisons.
    public static func changes<Value: Equatable>(from base: [String: Value], to version: [String: Value])
        -> [FieldChange<Value>]
    {
        changes(from: base, to: version, by: ==)
    }
}
