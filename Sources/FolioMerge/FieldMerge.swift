/// A three-way merge of key → value maps (a record's fields, a package's members), key by key.
///
/// For each key, a version *changed* it when its value differs from the ancestor's (setting, replacing and removing
/// are all changes). Then:
/// - no version changed it: the ancestor's value stays;
/// - the versions that changed it agree: their value is taken once (removed by all of them: removed);
/// - some set a value and others removed it: the edit wins ("edit beats remove": nothing a person typed is lost to a
///   concurrent deletion), provided the editing versions agree;
/// - the editing versions set different values: a conflict; the merged map keeps the first editing version's value,
///   which for two versions is the first version's.
///
/// Keys are visited in Unicode scalar order, so conflicts come out sorted and nothing depends on hashing order.
public enum FieldMerge {
    /// A key the versions set to different values.
    public struct Conflict<Value> {
        /// The key.
        public var key: String
        /// The ancestor's value (`nil` when absent).
        public var base: Value?
        /// Each version's value, in the order the versions were given (`nil` when absent).
        public var values: [Value?]

        /// Creates a conflict record.
        public init(key: String, base: Value?, values: [Value?]) {
            self.key = key
            self.base = base
            self.values = values
        }
    }

    /// What a merge of maps produced.
    public struct Result<Value> {
        /// Every key that merged, and for each conflicting key the first editing version's value.
        public var merged: [String: Value]
        /// The keys still in conflict, sorted by key (by Unicode scalars).
        public var conflicts: [Conflict<Value>]

        /// Creates a result.
        public init(merged: [String: Value], conflicts: [Conflict<Value>]) {
            self.merged = merged
            self.conflicts = conflicts
        }

        /// Whether every key merged.
        public var isClean: Bool { conflicts.isEmpty }
    }

    /// Merges `versions` of the map `base`, values compared with `areEqual`.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*k* log *k* + *k* · *V*) comparisons for *k* keys in all and *V* versions.
    public static func merge<Value>(
        base: [String: Value], versions: [[String: Value]], by areEqual: (Value, Value) -> Bool
    ) -> Result<Value> {
        precondition(!versions.isEmpty, "a merge needs at least one version")
        func same(_ left: Value?, _ right: Value?) -> Bool {
            switch (left, right) {
            case (nil, nil): true
            case (let left?, let right?): areEqual(left, right)
            default: false
            }
        }
        var merged = base
        var conflicts: [Conflict<Value>] = []
        for key in sortedKeys(base, versions) {
            let old = base[key]
            let values = versions.map { $0[key] }
            let edits = values.compactMap { $0 }.filter { !same($0, old) }
            if let first = edits.first {
                merged[key] = first
                if !edits.allSatisfy({ areEqual($0, first) }) {
                    conflicts.append(Conflict(key: key, base: old, values: values))
                }
            } else if values.contains(where: { $0 == nil }) {
                // No version set a new value and at least one removed the key.
                merged[key] = nil
            }
        }
        return Result(merged: merged, conflicts: conflicts)
    }

    /// Merges `versions` of the map `base`, values compared with `==`.
    ///
    /// `String`'s `==` compares by canonical equivalence; pass a comparison to ``merge(base:versions:by:)`` to tell
    /// `"é"` from `"e\u{301}"`.
    ///
    /// - Precondition: `versions` is not empty.
    /// - Complexity: O(*k* log *k* + *k* · *V*) comparisons for *k* keys in all and *V* versions.
    public static func merge<Value: Equatable>(base: [String: Value], versions: [[String: Value]]) -> Result<Value> {
        merge(base: base, versions: versions, by: ==)
    }

    /// Every key of `base` and `others`, once, sorted by Unicode scalars.
    static func sortedKeys<Value>(_ base: [String: Value], _ others: [[String: Value]]) -> [String] {
        var keys = Set(base.keys)
        for other in others { keys.formUnion(other.keys) }
        return keys.sorted { $0.precedesByScalars($1) }
    }
}

extension FieldMerge.Conflict: Equatable where Value: Equatable {}
extension FieldMerge.Conflict: Hashable where Value: Hashable {}
extension FieldMerge.Conflict: Sendable where Value: Sendable {}
extension FieldMerge.Result: Equatable where Value: Equatable {}
extension FieldMerge.Result: Sendable where Value: Sendable {}
