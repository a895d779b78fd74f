import FolioConflicts
import FolioCore

/// What an open document knows of its versions: the states of its heads as last computed (each version is replayed
/// once), the states of versions it lately showed (versions made elsewhere usually start at one of them), the heads
/// its next change joins, and the conflict engine that groups the heads into versions. A value the document owns;
/// nothing here reads the log.
struct VersionTracking<Model: DocumentModel> {
    /// A change and the state at it.
    struct KnownState {
        var change: Change
        var model: Model
    }

    /// The versions the model shows merged silently (`ConflictEngine.mergeSilently(hasResolver:in:)`): the head
    /// shown, with the state at it, and the other heads merged with it. The next edit is made on all of them.
    struct ShownMerge {
        var shown: KnownState
        var others: [ChangeHash]
    }

    /// How many ``sharedStates`` are kept.
    static var sharedStateLimit: Int { 8 }

    /// The conflict engine: groups the heads into versions and decides what the library's policy does about them.
    var conflicts: ConflictEngine<Model>
    /// The states of the heads, by hash, as last computed, with their changes.
    var headStates: [ChangeHash: KnownState] = [:]
    /// The states of the last versions the document took without editing them (opened, picked up from others,
    /// settled), newest last. A few at most (``sharedStateLimit``).
    private(set) var sharedStates: [KnownState] = []
    /// Versions lately shown, a few at least ``stateSpacing`` changes apart, newest last (``sharedStateLimit`` at
    /// most): where the replay of a merge with a device that saw none of the latest versions starts.
    private var spacedStates: [KnownState] = []
    /// How many changes apart ``spacedStates`` are kept.
    static var stateSpacing: UInt64 { 64 }
    /// The states at points the last replay from the change graph passed, every later change descending from each
    /// (``DocumentReplay/Outcome/passedStates``): what arrives next from devices typing together is replayed from
    /// one of them rather than from the checkpoint.
    private var passedStates: [KnownState] = []
    /// Heads that changed only the name or place since contents another head includes: made on by the next change.
    var absorbedHeads: [ChangeHash] = []
    /// Other heads whose state equals the current one: the next change is made on them too, so versions that
    /// settled the same way merge quietly.
    var sameStateHeads: [ChangeHash] = []
    /// The heads (versions, then absorbed) and the head shown when the engine last grouped them: while they stay
    /// the same, so do the versions, and they are not grouped again.
    private var observed: (heads: [ChangeHash], shown: ChangeHash)?
    /// The heads the model shows merged silently, if it does (see ``mergeShown(at:)``).
    private var shownMerge: ShownMerge?
    /// The operation groups the versions' replays decoded lately, shared by the copies of this value.
    let decodedOperations = DecodedOperations()

    /// Tracking for `document` under `policy`, knowing nothing yet.
    init(document: DocumentID, policy: ConflictPolicy) {
        conflicts = ConflictEngine(document: document, policy: policy)
    }

    /// The versions as last grouped, if the heads and the head shown are still those they were grouped from.
    func versions(ifStill heads: ContentHeads, shown: ChangeHash) -> [HeadGroup<Model>]? {
        guard let observed, observed.shown == shown,
            observed.heads == (heads.versions + heads.absorbed).map(\.hash)
        else { return nil }
        return conflicts.versions
    }

    /// Groups `heads` into versions with their `states`, as the conflict engine does, and remembers the states.
    mutating func observe(
        _ heads: ContentHeads, states: [ChangeHash: Model], shown: ChangeHash
    ) -> [HeadGroup<Model>] {
        absorbedHeads = heads.absorbed.map(\.hash)
        headStates = Dictionary(
            uniqueKeysWithValues: heads.versions.compactMap { head in
                states[head.hash].map { (head.hash, KnownState(change: head, model: $0)) }
            })
        let groups = conflicts.observe(heads, states: states, shown: shown)
        observed = ((heads.versions + heads.absorbed).map(\.hash), shown)
        sameStateHeads = groups.first.map { $0.heads.map(\.hash).filter { $0 != shown } } ?? []
        return groups
    }

    /// Forgets every state: the model shown is not the state at its head, so nothing known starts from it.
    mutating func forgetStates() {
        headStates = [:]
        sharedStates = []
        spacedStates = []
        passedStates = []
        observed = nil
        shownMerge = nil
    }

    /// The versions the model shows merged silently, when `head` is still the head shown among them; `nil` when the
    /// model shows the state at `head` alone.
    func mergeShown(at head: ChangeHash) -> ShownMerge? {
        shownMerge?.shown.change.hash == head ? shownMerge : nil
    }

    /// The model now shows `shown`'s head merged silently with `others` (or, with `nil`, the state at its head).
    mutating func showMerge(_ merge: ShownMerge?) {
        shownMerge = merge
    }

    /// The next change was made (or failed): the heads it joined are no longer to be joined, and the versions are
    /// grouped again when next asked for, which finds the heads to join anew.
    mutating func joined() {
        sameStateHeads = []
        absorbedHeads = []
        observed = nil
    }

    /// A settlement made `change`, with `state`, the one version.
    mutating func settled(at change: Change, state: Model) {
        sameStateHeads = []
        headStates = [change.hash: KnownState(change: change, model: state)]
        observed = nil
    }

    /// The states known by change: the heads', the versions lately shown, and the head shown beside a merge
    /// (what a replay may start from, ``DocumentReplay/known``).
    var knownStates: [ChangeHash: (vector: VersionVector, model: Model)] {
        var known: [ChangeHash: (vector: VersionVector, model: Model)] = [:]
        for state in passedStates + spacedStates + sharedStates + Array(headStates.values)
            + (shownMerge.map { [$0.shown] } ?? [])
        {
            known[state.change.hash] = (state.change.vector, state.model)
        }
        return known
    }

    /// Keeps the states a replay from the change graph passed (``DocumentReplay/Outcome/passedStates``) in place of
    /// those kept before, when there are any.
    mutating func rememberPassed(_ states: [KnownState]) {
        guard !states.isEmpty else { return }
        passedStates = states
    }

    /// Keeps `model`, the state at `head`, among the versions lately shown.
    ///
    /// With `spacedOnly` (a change this document just committed), only when it is ``stateSpacing`` changes past the
    /// last spaced one: a kept state is copied at the next edit, which is not worth paying at every keystroke.
    mutating func rememberShown(_ head: Change, model: Model, spacedOnly: Bool = false) {
        guard !sharedStates.contains(where: { $0.change.hash == head.hash }) else { return }
        if !spacedOnly {
            sharedStates.append(KnownState(change: head, model: model))
            if sharedStates.count > Self.sharedStateLimit { sharedStates.removeFirst() }
        }
        if head.vector.changeCount >= (spacedStates.last?.change.vector.changeCount ?? 0) + Self.stateSpacing {
            spacedStates.append(KnownState(change: head, model: model))
            if spacedStates.count > Self.sharedStateLimit { spacedStates.removeFirst() }
        }
    }

    /// The known states `target` descends from, the nearest first: `shown` (the state at `head`), the heads' states
    /// and the versions lately shown.
    func starts(toward target: Change, head: Change, shown: Model) -> [KnownState] {
        let others =
            headStates.values.filter { $0.change.hash != head.hash }
            + sharedStates.filter { $0.change.hash != head.hash && headStates[$0.change.hash] == nil }
        return ([KnownState(change: head, model: shown)] + others)
            .filter { $0.change.vector.isContained(in: target.vector) }
            .sorted { ($0.change.vector.changeCount, $0.change.hash) > ($1.change.vector.changeCount, $1.change.hash) }
    }
}
