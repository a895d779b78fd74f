/// One way a version of a document differs from another (its common ancestor with competing versions, say): lines
/// of a text, a field of a record, a member of a package. Reports show a version as the list of these.
public struct ContentChange: Hashable, Sendable, CustomStringConvertible {
    /// What happened at ``location``.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// Present in the version only.
        case added
        /// Present in the ancestor only.
        case removed
        /// Present in both, different.
        case changed
    }

    /// Where, in the model's words: `line 3`, `lines 3–5`, `after line 2`, `r1.name`, `images/cover.png`,
    /// `text.txt line 4`.
    public var location: String
    /// Added, removed or changed.
    public var kind: Kind
    /// The ancestor's value there, as lines of text (empty when absent); binary values are summarized.
    public var base: [String]
    /// The version's value there, as lines of text (empty when absent).
    public var version: [String]

    /// Creates a change.
    public init(location: String, kind: Kind, base: [String], version: [String]) {
        self.location = location
        self.kind = kind
        self.base = base
        self.version = version
    }

    /// `changed r1.name: "Ann" → "Anne"`, on one line.
    public var description: String {
        func joined(_ lines: [String]) -> String { lines.joined().debugDescription }
        switch kind {
        case .added: return "added \(location): \(joined(version))"
        case .removed: return "removed \(location): \(joined(base))"
        case .changed: return "changed \(location): \(joined(base)) → \(joined(version))"
        }
    }
}
