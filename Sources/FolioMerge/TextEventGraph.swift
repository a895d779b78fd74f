/// A text computed from a graph of concurrent edit events, merged character by character.
///
/// Each event names its parents (earlier events; none means the base text) and carries edits whose positions are
/// relative to the text its author saw: every event in its parents' past applied, merged. The graph is replayed in
/// the order the events are added, which must put parents first (a topological order); any such order gives the
/// same text, so every device that holds the same events computes the same text whatever order they arrived in.
///
/// The replay follows the event-graph walker of Gentle and Kleppmann ("Eg-walker", EuroSys 2025). Every inserted
/// scalar becomes an item of one list that holds every version's items. Before an event's edits apply, the list's
/// *prepare* view is moved to the event's parents by retreating the events the parents do not hold and advancing
/// those they do, so a position finds the item the author pointed at. An insert records the items it went between
/// (its origins) and is placed among concurrent inserts at the same place by the YjsMod rule: the origins decide,
/// then the events' agents. A run typed at one place stays contiguous, and concurrent runs at one place are never
/// interleaved. A deleted item is hidden in the merged text as soon as any event deletes it.
///
/// Agents must tell concurrent events apart (Folio passes each change's id): concurrent inserts at one place by one
/// agent would tie, and fall in replay order.
///
/// Edits are bounded by the text they are made on: a position or count past its end is not applied and counted
/// in ``skippedEdits``, identically on every device.
///
/// - Complexity: an event whose parents are the previous event's version costs its edits, each O(*n* / *B* + *B*)
///   for *n* items in blocks of about *B*; moving between concurrent versions costs the events between them.
public struct TextEventGraph<Agent: Comparable> {
    /// Why an event is refused.
    public enum Failure: Error, Equatable {
        /// A parent is not an earlier event's index.
        case unknownParent(Int)
    }

    @usableFromInline var core: TextEventCore
    @usableFromInline var agents: [Agent] = []
    /// The parents of the event being added, as the core reads them: one array kept for every event.
    @usableFromInline var parentBuffer: [Int32] = []

    /// A graph whose events start from `base`.
    ///
    /// - Complexity: O(*n*) for *n* base scalars.
    public init(base: [Unicode.Scalar] = []) {
        core = TextEventCore(base: base)
    }

    /// The number of events.
    public var eventCount: Int { agents.count }

    /// Edits that were not applied because a position or count was out of bounds.
    public var skippedEdits: Int { core.skippedEdits }

    /// The merged text: every event applied.
    ///
    /// - Complexity: O(*n*) for *n* items.
    public var text: String { core.text }

    /// The merged text of every event, by who typed it: runs of scalars in text order, each with the agent of the
    /// event that typed them (`nil` for the base text) and how many scalars in a row.
    ///
    /// - Complexity: O(*n*) in the items typed and the base's runs.
    public func typists() -> [(agent: Agent?, count: Int)] {
        core.typedRuns().map { run in (run.event == TextEventCore.none ? nil : agents[Int(run.event)], run.count) }
    }

    /// Adds an event made by `agent` on `parents` (indexes of earlier events; empty: the base text) and applies
    /// its edits in order. Returns the event's index.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when a parent is not an earlier event; nothing is added then.
    @discardableResult @inlinable
    public mutating func add(agent: Agent, parents: [Int], edits: [TextEdit]) throws(Failure) -> Int {
        try add(agent: agent, parents: parents, edits: edits, range: edits.indices)
    }

    /// Adds an event made by `agent` on `parents` whose edits are `edits[range]`: a replay that keeps every event's
    /// edits in one list passes each event's stretch of it, with no array of its own. A range past the list's ends
    /// is cut to them.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when a parent is not an earlier event; nothing is added then.
    @discardableResult @inlinable
    package mutating func add(agent: Agent, parents: [Int], edits: [TextEdit], range: Range<Int>) throws(Failure)
        -> Int
    {
        // Inlinable, so that a caller's concrete agent type compares agents directly, without a generic closure per
        // event.
        for parent in parents where parent < 0 || parent >= agents.count {
            throw .unknownParent(parent)
        }
        agents.append(agent)
        let agents = self.agents
        parentBuffer.removeAll(keepingCapacity: true)
        for parent in parents { parentBuffer.append(Int32(parent)) }
        return core.add(parents: parentBuffer, edits: edits[range.clamped(to: edits.indices)]) {
            agents[Int($0)] < agents[Int($1)]
        }
    }

    /// Makes room for `events` more events that type about `scalars` scalars in all, so that a replay whose size is
    /// known does not grow the graph's arrays step by step.
    public mutating func reserveCapacity(events: Int, scalars: Int) {
        agents.reserveCapacity(agents.count + events)
        core.reserveCapacity(events: events, items: scalars)
    }

    /// The merge of `versions` (events' indexes, each standing for the version its past makes): their edits merged
    /// character by character, and the stretches where two of them overlap (``TextOverlap``).
    ///
    /// Two versions overlap where both deleted some of the same scalars of their common text (the text of the past
    /// they share) and did not make the same pure deletion there. Stretches are delimited by the common scalars
    /// both kept, so typing at one place by both is never an overlap, nor is typing inside a stretch the other
    /// deleted, nor edits of one line at different scalars. Where two versions overlap, the merged text shows the
    /// first one's text of the stretch instead of interleaving the two.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when a version is not an event.
    /// - Complexity: when no two versions deleted a scalar in common, the events that are not in the past of every
    ///   version and their deletes, then O(*n*) for the text; otherwise O(*v* · *n*) more for *v* versions and *n*
    ///   items and entries of the list.
    public mutating func merge(of versions: [Int]) throws(Failure) -> TextMerge {
        for version in versions where version < 0 || version >= agents.count {
            throw .unknownParent(version)
        }
        return core.merge(of: versions.map { Int32($0) })
    }

    /// The text of the version at `versions` (events' indexes; empty: the base text): what the events of their
    /// past did, merged, and nothing of the events made apart from them. The view the graph replays from is not
    /// moved, so reading a version's text costs no edit of the graph.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when a version is not an event.
    /// - Complexity: O(*n* + *e* + *d*) for *n* items and entries of the list, *e* events and *d* scalars deleted in
    ///   the versions' past.
    public func text(at versions: [Int]) throws(Failure) -> String {
        for version in versions where version < 0 || version >= agents.count {
            throw .unknownParent(version)
        }
        return core.versionText(versions.map { Int32($0) })
    }

    /// Where the scalars that the events `marks` typed stand in the merged text of every other event (``text``
    /// without them): for each mark, the positions of its scalars that no event deleted, in the order of the text.
    ///
    /// An event that types one scalar at each of a few positions of its parents' text marks those places: its
    /// scalars are placed among concurrent edits as any insert is (after the scalar before them, however much
    /// was typed before that since), so their positions say where the places moved in the merged text.
    ///
    /// - Complexity: O(*n*) for *n* items and entries of the list.
    public func mergedPositions(of marks: [Int]) -> [[Int]] {
        core.mergedPositions(of: marks.map { Int32(truncatingIfNeeded: $0) })
    }

    /// The edits that take ``text`` (every event applied) to the text without what `events` did: the scalars they
    /// typed deleted, and the scalars they deleted that no other event deleted typed again where they stood. What
    /// other events did stays, even where it lies among the scalars `events` typed, and so does what they typed on
    /// scalars `events` typed (a scalar typed by one of `events` and deleted by another event stays deleted). This
    /// is a selective undo: it takes back the edits of some events of a history that went on after them.
    ///
    /// The edits apply in order to ``text``: each one's position is in the text the ones before it made.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when an event is not an index of the graph.
    /// - Complexity: O(*n* + *d*) for *n* items and entries of the list and *d* scalars deleted in all.
    public func reversal(of events: [Int]) throws(Failure) -> [TextEdit] {
        for event in events where event < 0 || event >= agents.count {
            throw .unknownParent(event)
        }
        return core.reversal(of: events.map { Int32($0) })
    }

    /// Whether an event other than `events` deleted a scalar that one of `typers` typed. Before a ``reversal(of:)``
    /// that takes back an undo along with the edit it undid, this says whether someone else deleted some of what the
    /// undo typed again: the reversal would bring back the scalars the undo retyped, which the others' delete did not
    /// name.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when an event is not an index of the graph.
    /// - Complexity: O(*e* + *d*) for *e* events and *d* scalars deleted in all.
    public func othersDeleted(scalarsTypedBy typers: [Int], apartFrom events: [Int]) throws(Failure) -> Bool {
        for event in typers + events where event < 0 || event >= agents.count {
            throw .unknownParent(event)
        }
        return core.othersDeleted(
            scalarsTypedBy: typers.map { Int32($0) }, apartFrom: events.map { Int32($0) })
    }

    /// Traps unless the graph's list is consistent (for tests).
    package func checkInvariants() { core.checkInvariants() }

    /// Adds an event made by `agent` on `parents` whose text is the text of `kept` (earlier events in the past of
    /// `parents`): a choice among versions. The characters the parents' merged version shows and `kept`'s version
    /// does not are deleted; the characters `kept`'s version shows and the parents' version deleted are typed again
    /// at their place. Events made apart from it merge with it as with any edit: a character a discarded version
    /// typed stays deleted, and what is typed later on a discarded version comes in. Returns the event's index.
    ///
    /// - Throws: ``Failure/unknownParent(_:)`` when a parent or a kept event is not an earlier event; nothing is
    ///   added then.
    /// - Complexity: O(*n*) for *n* items, beside moving between versions.
    @discardableResult
    public mutating func add(agent: Agent, parents: [Int], keeping kept: [Int]) throws(Failure) -> Int {
        for parent in parents + kept where parent < 0 || parent >= agents.count {
            throw .unknownParent(parent)
        }
        agents.append(agent)
        let agents = self.agents
        return core.add(parents: parents.map { Int32($0) }, keeping: kept.map { Int32($0) }) {
            agents[Int($0)] < agents[Int($1)]
        }
    }
}
