import Foundation

/// A part of a three-way merge that could not be settled automatically.
public struct MergeConflict: Hashable, Sendable, CustomStringConvertible {
    /// Where in the document, such as `line 12`, `r1.name` or `images/cover.png`.
    public var location: String
    /// The common ancestor's value there (`nil` when absent).
    public var base: String?
    /// Each competing version's value there, in the order the versions were given (`nil` when absent).
    public var values: [String?]

    /// Creates a conflict record.
    public init(location: String, base: String?, values: [String?]) {
        self.location = location
        self.base = base
        self.values = values
    }

    /// `location: base → v1 | v2`.
    public var description: String {
        "\(location): \(base ?? "∅") → " + values.map { $0 ?? "∅" }.joined(separator: " | ")
    }
}
