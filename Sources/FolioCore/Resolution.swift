import Foundation

/// How competing versions were settled.
public struct Resolution: Hashable, Sendable {
    /// The rule that settled them.
    public enum Strategy: Hashable, Sendable {
        /// A person chose.
        case userChoice
        /// The latest by wall time, then lamport, then device.
        case latestWins
        /// A three-way merge from the common ancestor, by rule.
        case merge
        /// The app's own merge of the versions (a person's, or a custom resolver's result): every version an input,
        /// none discarded, the merged contents carried.
        case appMerge
        /// The losers became new documents.
        case keepBoth
        /// An app-defined rule, by name.
        case custom(String)
    }

    /// The rule that settled the versions.
    public let strategy: Strategy
    /// The heads whose versions were kept (one for a choice, several for a merge), in ascending order.
    public let chosen: [ChangeHash]
    /// The heads whose versions were discarded, in ascending order: the loss ledger's entries.
    public let discarded: [ChangeHash]
    /// New contents in the model's encoding, when the result is none of the versions as they were (a merge or
    /// contents a person supplied); `nil` when the result is exactly the chosen version.
    public let contents: Data?

    /// Creates a resolution record; the hash lists are kept sorted and without repeats, as the encoding needs.
    public init(strategy: Strategy, chosen: [ChangeHash], discarded: [ChangeHash], contents: Data? = nil) {
        self.strategy = strategy
        self.chosen = Array(Set(chosen)).sorted()
        self.discarded = Array(Set(discarded)).sorted()
        self.contents = contents
    }
}
