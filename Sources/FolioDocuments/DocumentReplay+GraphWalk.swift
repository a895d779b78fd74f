import FolioCore

// The bookkeeping of a graph replay's walk (`DocumentReplay+Graph.swift`): the nodes it meets, the order it meets
// them in, and the events it makes of them.

/// Each event's parents, as one list of links and where each event's start in it: no array per event, of which a
/// replay has tens of thousands (``lists`` makes them for a model with parts beside its text). Held in 32 bits: a
/// replay's events and links are far fewer than 2³¹, and half the width is half the fresh memory a long replay
/// touches.
struct EventParents {
    /// The parents of every event, event after event.
    private var links: [Int32] = []
    /// Where each event's parents start in ``links``, and after the last, the end.
    private var starts: [Int32] = [0]

    /// The number of events.
    var count: Int { starts.count - 1 }

    /// The number of parents of all events.
    var linkCount: Int { links.count }

    /// Makes room for `events` more events with `links` parents in all.
    mutating func reserveCapacity(events: Int, links: Int) {
        starts.reserveCapacity(starts.count + events)
        self.links.reserveCapacity(self.links.count + links)
    }

    /// Adds an event with these parents.
    mutating func append(_ parents: [Int]) {
        for parent in parents { links.append(Int32(truncatingIfNeeded: parent)) }
        starts.append(Int32(truncatingIfNeeded: links.count))
    }

    /// The places of `event`'s parents among the links.
    func range(of event: Int) -> Range<Int> { Int(starts[event])..<Int(starts[event + 1]) }

    /// The parent at place `link` (in the ``range(of:)`` of its event).
    func parent(atLink link: Int) -> Int { Int(links[link]) }

    /// Each event's parents as a list of its own.
    var lists: [[Int]] { (0..<count).map { event in range(of: event).map { parent(atLink: $0) } } }
}

/// The events of a graph replay, earliest first (the walk met them latest first): each one's node, its parents (as
/// events, the nodes before the walk's end left out) and the node of the version it keeps (-1 but for a choice).
struct EventList {
    /// Each event's node.
    let nodes: [Int]
    /// Each event's parents, as events.
    let parents: EventParents
    /// The node of the version each event keeps, or -1.
    let keeps: [Int]
    /// Each node's event, or -1 for a node that is none.
    let position: [Int]

    /// The events of a walk that met `walked` (nodes), latest first, with their parents (nodes) and kept versions.
    /// The lists are reversed in place when the caller holds no other reference to them.
    init(
        walked: consuming [Int], parents walkedParents: EventParents, keeps walkedKeeps: consuming [Int],
        nodeCount: Int
    ) {
        var nodes = consume walked
        nodes.reverse()
        var keeps = consume walkedKeeps
        keeps.reverse()
        var position = [Int](repeating: -1, count: nodeCount)
        for (event, node) in nodes.enumerated() { position[node] = event }
        var parents = EventParents()
        parents.reserveCapacity(events: nodes.count, links: walkedParents.linkCount)
        var eventParents: [Int] = []
        for walkedIndex in (0..<walkedParents.count).reversed() {
            eventParents.removeAll(keepingCapacity: true)
            for link in walkedParents.range(of: walkedIndex) {
                let event = position[walkedParents.parent(atLink: link)]
                if event >= 0 { eventParents.append(event) }
            }
            parents.append(eventParents)
        }
        self.nodes = nodes
        self.keeps = keeps
        self.parents = parents
        self.position = position
    }

    /// The number of events.
    var count: Int { nodes.count }
}

/// The changes a graph replay's walk meets, each by a number (its node): the tail's by their index there, then
/// those read from the store, after them.
struct WalkNodes {
    let tail: ReplayTail
    private var read: [Change] = []
    private var readIndexes: [ChangeHash: Int] = [:]
    /// Whether the walk has met each node.
    var seen: [Bool]

    init(_ tail: ReplayTail) {
        self.tail = tail
        seen = [Bool](repeating: false, count: tail.count)
    }

    /// The number of nodes.
    var count: Int { tail.count + read.count }

    subscript(node: Int) -> Change { node < tail.count ? tail.changes[node] : read[node - tail.count] }

    /// The node of the change with this hash, if it has one; `namer`, the node of a change that names it, if any.
    func node(of hash: ChangeHash, namedBy namer: Int?) -> Int? {
        tail.index(of: hash, before: namer.map { min($0, tail.count) } ?? tail.count)
            ?? readIndexes[hash].map { tail.count + $0 }
    }

    /// The node of the change with this hash, if the tail holds it among the changes just before `namer` (a node
    /// that names it) or the walk read it from the store.
    func nearbyNode(of hash: ChangeHash, namedBy namer: Int) -> Int? {
        (namer < tail.count ? tail.nearbyIndex(of: hash, before: namer) : nil)
            ?? readIndexes[hash].map { tail.count + $0 }
    }

    /// The node of `change`, which it is given if it has none.
    mutating func node(of change: Change, namedBy namer: Int?) -> Int {
        if let node = node(of: change.hash, namedBy: namer) { return node }
        readIndexes[change.hash] = read.count
        read.append(change)
        seen.append(false)
        return count - 1
    }
}

/// A node of the walk, by (lamport, id), the latest first: an order in which every change comes after its
/// descendants.
struct LatestNode: Comparable {
    let lamport: UInt64
    let id: ChangeID
    let node: Int

    init(_ change: Change, node: Int) {
        lamport = change.lamport
        id = change.id
        self.node = node
    }

    static func < (lhs: LatestNode, rhs: LatestNode) -> Bool { (lhs.lamport, lhs.id) < (rhs.lamport, rhs.id) }

    static func == (lhs: LatestNode, rhs: LatestNode) -> Bool { lhs.lamport == rhs.lamport && lhs.id == rhs.id }
}
