import FolioCore

/// The conflict engine of one document, with no I/O: heads, history and policy go in; the versions, the conflict
/// state, settlements to record (``ConflictAction``) and the loss ledger come out.
///
/// The owner (a `Document`) reads the heads and their states, splits the heads with the content rule
/// (``PrimaryParentRule/contentHeads(among:)``) and hands them to ``observe(_:states:shown:)``; the engine groups them
/// into versions, the current one first. ``nextAction(hasResolver:in:displayName:devices:)`` then says what the
/// policy does about a conflict, and the owner carries it out: appending a settlement's resolution, creating its
/// copies, updating its state. Whatever else the engine needs of the past (the common ancestor, the change that
/// made a version's contents) it reads through a ``ConflictHistory`` passed in, and it throws only what that
/// history throws.
///
/// Every answer depends on the heads and the history alone, never on the order in which changes arrived or on
/// hash-table order: every device that holds the same heads reaches the same versions and the same settlement.
public struct ConflictEngine<Model: DocumentModel>: Sendable {
    /// The document the engine settles.
    public let document: DocumentID
    /// The strategy the library's policy gives the document's type.
    public let strategy: ConflictStrategy
    /// The versions as last observed: heads grouped by equal state, the current version first, then the others in
    /// causal order. Empty before the first observation.
    public internal(set) var versions: [HeadGroup<Model>] = []
    /// The heads last observed that carry no version of their own; a settlement is made on them too.
    public private(set) var absorbed: [ChangeHash] = []
    /// The content hash of each head's state, as last computed: a head's state never changes, so detection costs
    /// what arrived, not the history.
    private var contentKeys: [ChangeHash: ContentHash] = [:]

    /// Creates the engine of `document`, settling as `policy` says for `Model`'s type.
    public init(document: DocumentID, policy: ConflictPolicy) {
        self.document = document
        strategy = policy.strategy(for: Model.documentType)
    }

    /// Whether versions compete.
    public var state: ConflictState { versions.count > 1 ? .inConflict(versions: versions.count) : .settled }

    /// Whether versions compete.
    public var isInConflict: Bool { versions.count > 1 }

    /// The heads of every version, then the absorbed heads: what a settlement is made on.
    public var settlementParents: [ChangeHash] { versions.flatMap { $0.heads.map(\.hash) } + absorbed }

    // MARK: Heads in

    /// Takes the document's heads and their states, and groups them into versions: equal states form one version.
    /// The current version comes first: the one holding `shown` (the head the owner shows) or, when `shown` is no
    /// longer a head, the one every device shows (highest lamport, then device); the others follow in causal order.
    ///
    /// - Parameters:
    ///   - heads: the heads, split by the content rule.
    ///   - states: the state at each of `heads.versions`, by hash.
    ///   - shown: the head whose state the owner shows.
    /// - Returns: the versions (also kept in ``versions``).
    /// - Precondition: `states` holds every head of `heads.versions`.
    @discardableResult
    public mutating func observe(_ heads: ContentHeads, states: [ChangeHash: Model], shown: ChangeHash) -> [HeadGroup<
        Model
    >] {
        absorbed = heads.absorbed.map(\.hash)
        let versionHeads = heads.versions
        func state(_ head: Change) -> Model {
            guard let state = states[head.hash] else { preconditionFailure("no state for head \(head.hash.shortHex)") }
            return state
        }
        // One head is one version: nothing to compare.
        guard versionHeads.count > 1 else {
            contentKeys = [:]
            versions = versionHeads.map { HeadGroup(heads: [$0], state: state($0)) }
            return versions
        }
        var groups: [HeadGroup<Model>] = []
        var keys: [ContentHash] = []
        var headKeys: [ChangeHash: ContentHash] = [:]
        for head in versionHeads.sortedByHeadOrder() {
            let headState = state(head)
            let key = contentKeys[head.hash] ?? ContentHash(hashing: headState.contents().encoded())
            headKeys[head.hash] = key
            if let index = keys.firstIndex(of: key) {
                groups[index].heads.append(head)
            } else {
                keys.append(key)
                groups.append(HeadGroup(heads: [head], state: headState))
            }
        }
        contentKeys = headKeys
        // The current version's group first: the one shown or, when others' changes made on it arrived since (it is
        // no longer a head), the one every device shows (not merely the causally first).
        let winner = heads.winner
        let current =
            groups.firstIndex { $0.contains(shown) } ?? groups.firstIndex { $0.contains(winner?.hash ?? shown) }
        if let index = current, index > 0 {
            groups.insert(groups.remove(at: index), at: 0)
        }
        versions = groups
        return versions
    }

    // MARK: Policy out

    /// What the policy does about the versions last observed: `nil` when nothing competes; ``ConflictAction/askResolver``
    /// when the owner has an app-defined resolver (it overrides the policy); otherwise the strategy's settlement, or
    /// ``ConflictAction/awaitUser(unmerged:)`` when the strategy leaves the conflict to a person (`askUser`, a merge
    /// that left parts in conflict, a model that cannot merge).
    ///
    /// - Parameters:
    ///   - hasResolver: whether the owner has an app-defined resolver.
    ///   - history: the document's history.
    ///   - displayName: the document's name, for the copies `keepBoth` makes.
    ///   - devices: the known devices, for the names of the copies `keepBoth` makes.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func nextAction<History: ConflictHistory<Model>>(
        hasResolver: Bool, in history: History, displayName: String, devices: [DeviceID: Device]
    ) throws(History.Failure) -> ConflictAction<Model>? {
        guard isInConflict else { return nil }
        if hasResolver { return .askResolver }
        switch strategy {
        case .askUser:
            return .awaitUser(unmerged: nil)
        case .latestWins:
            return try settlement(choosing: .latest, in: history).map { .settle($0) }
        case .merge:
            return try settlementByMerging(in: history) ?? .awaitUser(unmerged: nil)
        case .keepBoth:
            return try settlementKeepingBoth(in: history, displayName: displayName, devices: devices)
                .map { .settle($0) }
        }
    }

    /// Whether a conflict is settled without a person: by the app's resolver when there is one, otherwise by every
    /// strategy but `askUser`.
    public func settlesWithoutUser(hasResolver: Bool) -> Bool {
        hasResolver || strategy != .askUser
    }

    /// The settlement a person's choice makes: the chosen version kept, the others discarded (strategy `userChoice`
    /// for a version, `latestWins` for ``ConflictChoice/latest``).
    ///
    /// - Returns: `nil` when nothing competes, or when `choice` names no head of a version.
    /// - Throws: `History.Failure`, what reading `history` throws (to find the latest version).
    public func settlement<History: ConflictHistory<Model>>(
        choosing choice: ConflictChoice, in history: History
    ) throws(History.Failure) -> ConflictSettlement<Model>? {
        guard isInConflict else { return nil }
        switch choice {
        case .version(let hash):
            guard let chosen = versions.first(where: { $0.contains(hash) }) else { return nil }
            return settlement(keeping: chosen, strategy: .userChoice)
        case .latest:
            return settlement(keeping: try latestVersion(in: history), strategy: .latestWins)
        }
    }

    /// The settlement that replaces every version with `contents`, the app's merge of them (a person's own, or an
    /// app-defined resolver's result): strategy `appMerge`, every version an input (chosen), none discarded.
    ///
    /// - Returns: `nil` when nothing competes.
    public func settlement(with contents: Model) -> ConflictSettlement<Model>? {
        guard isInConflict else { return nil }
        let resolution = Resolution(
            strategy: .appMerge, chosen: versions.map(\.head.hash), discarded: [],
            contents: contents.contents().encoded())
        return ConflictSettlement(resolution: resolution, parents: settlementParents, state: contents)
    }

    /// The settlement that keeps `chosen` and discards the other versions.
    func settlement(keeping chosen: HeadGroup<Model>, strategy: Resolution.Strategy) -> ConflictSettlement<Model> {
        let discarded = versions.filter { $0.head.hash != chosen.head.hash }.map(\.head.hash)
        let resolution = Resolution(strategy: strategy, chosen: [chosen.head.hash], discarded: discarded)
        return ConflictSettlement(resolution: resolution, parents: settlementParents, state: chosen.state)
    }

    // MARK: Versions out

    /// The versions last observed as ``DocumentVersion``s: the current one first, each with its saving device and
    /// the competing versions' common ancestor state (``ancestorState(in:)``).
    public func documentVersions(ancestor: Model, devices: [DeviceID: Device]) -> [DocumentVersion<Model>] {
        versions.enumerated().map { index, group in
            DocumentVersion(
                head: group.head, heads: group.heads.map(\.hash),
                savingDevice: Self.device(group.head.id.device, devices),
                contents: group.state, ancestor: ancestor, isCurrent: index == 0, isConflict: index > 0)
        }
    }

    /// The state the competing versions grew from: the state at the latest change all of them include (an empty
    /// model when they share nothing). Without a conflict, the current version's state.
    ///
    /// - Precondition: the engine has observed heads.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public func ancestorState<History: ConflictHistory<Model>>(in history: History) throws(History.Failure) -> Model {
        precondition(!versions.isEmpty, "no heads observed")
        guard isInConflict else { return versions[0].state }
        guard let ancestor = try Self.commonAncestor(of: versions.map(\.head), in: history) else { return Model() }
        return try history.state(at: ancestor)
    }

    /// The latest change all of `heads` include: among the changes their vectors share, the causally maximal one
    /// that wins (highest lamport, then device; several in a criss-cross history), the same on every device. `nil`
    /// when they share no history.
    ///
    /// - Throws: `History.Failure`, what reading `history` throws.
    public static func commonAncestor<History: ConflictHistory<Model>>(
        of heads: [Change], in history: History
    ) throws(History.Failure) -> Change? {
        guard var meet = heads.first?.vector else { return nil }
        for head in heads.dropFirst() { meet = meet.intersecting(head.vector) }
        var candidates: [Change] = []
        for entry in meet.entries {
            if let change = try history.change(ChangeID(device: entry.device, seq: entry.seq)) {
                candidates.append(change)
            }
        }
        return
            candidates
            .filter { candidate in !candidates.contains { $0.id != candidate.id && $0.vector.contains(candidate.id) } }
            .winningHead()
    }
}
