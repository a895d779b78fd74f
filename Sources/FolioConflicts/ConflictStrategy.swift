/// How a library settles competing versions when they appear.
public enum ConflictStrategy: Hashable, Sendable, CustomStringConvertible {
    /// The document enters `.inConflict` until the app resolves it.
    case askUser
    /// The latest version by wall time, then lamport, then device wins; the others are recorded as discarded.
    case latestWins
    /// A three-way merge from the common ancestor (for models that can merge); what does not merge stays in
    /// conflict for the app.
    case merge
    /// The current version stays; every other version becomes a new document "NAME (conflict from DEVICE)".
    case keepBoth

    /// The strategy's name.
    public var description: String {
        switch self {
        case .askUser: "askUser"
        case .latestWins: "latestWins"
        case .merge: "merge"
        case .keepBoth: "keepBoth"
        }
    }
}
