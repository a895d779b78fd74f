import HeapModule

/// The replay behind ``TextEventGraph``, free of the agents' type so that it compiles to specialized code once, in
/// this module: ties between agents are decided by the caller (`precedes`, given events' indexes).
///
/// The list holds the base text as placeholder runs, as Eg-walker does: a run stands for a stretch of the base that
/// no edit has touched, visible in every version. An edit that deletes base scalars, or types next to one, takes
/// those scalars out of their run as items of their own; everything else of the base stays in runs. So the work and
/// the memory grow with the edits replayed, not with the length of the base.
@usableFromInline struct TextEventCore {
    static var blockCapacity: Int { 128 }
    static var none: Int32 { -1 }

    /// The text every event starts from.
    let base: [Unicode.Scalar]

    // Items, by id (the order they were made): the scalars events typed, and the base scalars taken out of their
    // run.
    var scalars: [Unicode.Scalar] = []
    var originLeft: [Int32] = []
    var originRight: [Int32] = []
    /// The event that typed the item; ``none`` for a base scalar.
    var itemEvent: [Int32] = []
    /// 0: not in the prepare view's version; 1: visible in it; 1 + k: deleted by k events of it.
    var prepare: [UInt32] = []
    /// Whether any event deleted the item.
    var deleted: [Bool] = []
    /// The identity of the block that holds the item.
    var blockOf: [Int32] = []

    // Placeholder runs, by index: stretches of the base, each visible in every version and deleted by none.
    var runStart: [Int32] = []
    var runCount: [Int32] = []

    /// A stretch of the list. An entry is an item's id, or `-1 - r` for placeholder run `r`.
    struct Block {
        var entries: [Int32]
        /// Each entry's visible scalars in the prepare view, so that finding a position reads one array.
        var lengths: [Int32]
        var visible: Int
        let identity: Int32
        /// Whether `lengths` waits to be read again from the items (``TextEventCore/refreshLengths()``).
        var isStale = false
    }
    var blocks: [Block] = []
    /// Each block's position in `blocks`, by identity.
    var blockPosition: [Int] = []
    /// A Fenwick tree of the blocks' visible counts, by block position (1-based), rebuilt when a block is added.
    var visibleTree: [Int] = [0]
    /// The largest power of two below `visibleTree.count` (0 while the tree is empty): where a search starts.
    var visibleTreeTop = 0
    /// The number of visible scalars.
    var visibleCount = 0
    /// How many times a block was split: places found before a split are stale after it.
    var splits = 0
    /// The identities of the blocks whose `lengths` are stale.
    var staleBlocks: [Int32] = []
    /// Counts the list's changes (a view moved, an item placed or deleted, a run or a block split): a ``Cursor``
    /// is valid while it has not moved.
    var listVersion = 0
    /// Where the last insert ended.
    var cursor: Cursor?
    /// Where the last delete ended: the visible position it was made at, and the place of the entry after the last
    /// scalar it deleted, where a delete at the same position starts looking.
    var deleteCursor: (position: Int, place: Place, version: Int)?

    /// Where an insert ended, so that typing on there (or deleting the scalar just typed) needs no search: the
    /// visible position after it, the last item before it in the view (its left origin) and the item after it (the
    /// right origin), with their places. Between the two there are only items the view does not hold.
    struct Cursor {
        var position: Int
        var left: Int32
        var leftPlace: Place?
        var right: Int32
        var rightPlace: Place
        var version: Int
    }

    // Events. Their parents, one after the other in `parentLinks`: event `e`'s from `parentStart[e]` to
    // `parentStart[e + 1]` (one array for all, not one per event).
    var parentLinks: [Int32] = []
    var parentStart: [Int32] = [0]
    var inserted: [Range<Int32>] = []
    var deleteTargets: [Int32] = []
    var deletes: [Range<Int>] = []
    /// The version the prepare view shows, as its frontier.
    var current: [Int32] = []
    /// Room for the flags of ``difference(from:to:)``, by event: all zero between its calls.
    var walkFlags: [UInt8] = []
    /// Room for the events the walk of ``difference(from:to:)`` reached. Empty between its calls; kept, as the other
    /// rooms of the walk and of ``move(to:)`` are, so that moving the view, which happens for most events of a
    /// concurrent history, allocates nothing.
    var walkReached: [Int32] = []
    /// Room for the events the walk of ``difference(from:to:)`` has still to visit, latest first. Empty between its
    /// calls.
    var walkQueue = Heap<Int32>()
    /// Room for the events ``move(to:)`` retreats and advances.
    var moveRetreat: [Int32] = []
    var moveAdvance: [Int32] = []

    /// Edits that were not applied because a position or count was out of bounds.
    private(set) var skippedEdits = 0

    /// A graph whose events start from `base`.
    ///
    /// - Complexity: O(1) beside keeping `base`.
    init(base: [Unicode.Scalar]) {
        self.base = base
        guard !base.isEmpty else { return }
        runStart = [0]
        runCount = [Int32(base.count)]
        blockPosition = [0]
        blocks = [Block(entries: [-1], lengths: [Int32(base.count)], visible: base.count, identity: 0)]
        rebuildVisibleTree()
    }

    /// The number of events.
    var eventCount: Int { parentStart.count - 1 }

    /// The parents of `event`.
    @inline(__always)
    func parents(of event: Int32) -> ArraySlice<Int32> {
        parentLinks[Int(parentStart[Int(event)])..<Int(parentStart[Int(event) + 1])]
    }

    /// Makes room for `events` more events and `items` more items, so that a replay whose size is known does not
    /// grow its arrays step by step.
    mutating func reserveCapacity(events: Int, items: Int) {
        parentLinks.reserveCapacity(parentLinks.count + events)
        parentStart.reserveCapacity(parentStart.count + events)
        inserted.reserveCapacity(inserted.count + events)
        deletes.reserveCapacity(deletes.count + events)
        let total = scalars.count + items
        scalars.reserveCapacity(total)
        originLeft.reserveCapacity(total)
        originRight.reserveCapacity(total)
        itemEvent.reserveCapacity(total)
        prepare.reserveCapacity(total)
        deleted.reserveCapacity(total)
        blockOf.reserveCapacity(total)
    }

    /// The merged text: every event applied.
    ///
    /// - Complexity: O(*n* + *e*) for *n* scalars in the text and *e* entries of the list.
    var text: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.count + scalars.count)
        for block in blocks {
            for entry in block.entries {
                if entry < 0 {
                    let run = Int(-1 - entry)
                    let start = Int(runStart[run])
                    for scalar in base[start..<(start + Int(runCount[run]))] { Self.appendUTF8(scalar, to: &bytes) }
                } else if !deleted[Int(entry)] {
                    Self.appendUTF8(scalars[Int(entry)], to: &bytes)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The merged text's scalars by the event that typed them, in runs: each run's event (``none`` for the base
    /// text) and how many scalars in a row it typed.
    ///
    /// - Complexity: O(*n* + *e*) for *n* items and *e* entries of the list.
    func typedRuns() -> [(event: Int32, count: Int)] {
        var runs: [(event: Int32, count: Int)] = []
        func add(_ event: Int32, _ count: Int) {
            guard count > 0 else { return }
            if let last = runs.last, last.event == event {
                runs[runs.count - 1].count += count
            } else {
                runs.append((event, count))
            }
        }
        for block in blocks {
            for entry in block.entries {
                if entry < 0 {
                    add(Self.none, Int(runCount[Int(-1 - entry)]))
                } else if !deleted[Int(entry)] {
                    add(itemEvent[Int(entry)], 1)
                }
            }
        }
        return runs
    }

    /// Where the scalars that `marks` (events) typed stand in the merged text of every other event: for each mark,
    /// the positions of its scalars that no event deleted, in list order, each counted in scalars of the other
    /// events only (a mark's scalars take no room).
    ///
    /// - Complexity: O(*n* + *e*) for *n* items and *e* entries of the list.
    func mergedPositions(of marks: [Int32]) -> [[Int]] {
        var slot: [Int32: Int] = [:]
        for (index, mark) in marks.enumerated() { slot[mark] = index }
        var result = [[Int]](repeating: [], count: marks.count)
        var position = 0
        for block in blocks {
            for entry in block.entries {
                if entry < 0 {
                    position += Int(runCount[Int(-1 - entry)])
                } else if !deleted[Int(entry)] {
                    if let index = slot[itemEvent[Int(entry)]] {
                        result[index].append(position)
                    } else {
                        position += 1
                    }
                }
            }
        }
        return result
    }

    @inline(__always)
    static func appendUTF8(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
        let value = scalar.value
        if value < 0x80 {
            bytes.append(UInt8(value))
        } else if value < 0x800 {
            bytes.append(UInt8(0xC0 | (value >> 6)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        } else if value < 0x1_0000 {
            bytes.append(UInt8(0xE0 | (value >> 12)))
            bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        } else {
            bytes.append(UInt8(0xF0 | (value >> 18)))
            bytes.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
            bytes.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (value & 0x3F)))
        }
    }

    /// Adds an event made on `eventParents` (indexes of earlier events, each checked by the caller; empty: the base
    /// text) and applies its edits in order; `precedes` orders two events' agents. Returns the event's index.
    @usableFromInline
    mutating func add(
        parents eventParents: [Int32], edits: ArraySlice<TextEdit>, precedes: (Int32, Int32) -> Bool
    ) -> Int {
        let event = Int32(eventCount)
        let frontier = Self.frontier(eventParents)
        move(to: frontier)
        parentLinks.append(contentsOf: frontier)
        parentStart.append(Int32(parentLinks.count))
        let firstItem = Int32(scalars.count)
        let firstDelete = deleteTargets.count
        for edit in edits {
            apply(edit, by: event, precedes: precedes)
        }
        // Base scalars taken out of their runs by this event's edits are items too, but not its own.
        inserted.append(firstItem..<Int32(scalars.count))
        deletes.append(firstDelete..<deleteTargets.count)
        // In place: the array of the next event's parents, often the caller's, is then never shared with it.
        current.removeAll(keepingCapacity: true)
        current.append(event)
        return Int(event)
    }

    /// Adds an event made on `eventParents` whose text is that of `kept` (events in its parents' past): the
    /// scalars its parents' version shows and `kept`'s does not are deleted, and those `kept`'s version shows and
    /// its parents' version deleted are typed again, each at its place. Returns the event's index.
    mutating func add(parents eventParents: [Int32], keeping kept: [Int32], precedes: (Int32, Int32) -> Bool) -> Int {
        move(to: Self.frontier(kept))
        var inKept = [Bool](repeating: false, count: scalars.count)
        for block in blocks where block.visible > 0 {
            for entry in block.entries where entry >= 0 && prepare[Int(entry)] == 1 { inKept[Int(entry)] = true }
        }
        move(to: Self.frontier(eventParents))
        let edits = self.edits(from: { prepare[$0] == 1 }, to: { inKept[$0] })
        return add(parents: eventParents, edits: edits[...], precedes: precedes)
    }

    /// The edits that take the text of the items `shown` holds for to the text of those `kept` holds for (placeholder
    /// runs are in both): in list order, each at its position in the text the edits before it made, neighbouring
    /// deletes and inserts merged into runs.
    ///
    /// - Complexity: O(*n* + *e*) for *n* items and *e* entries of the list.
    func edits(from shown: (Int) -> Bool, to kept: (Int) -> Bool) -> [TextEdit] {
        var edits: [TextEdit] = []
        var position = 0
        for block in blocks {
            for entry in block.entries {
                guard entry >= 0 else {
                    position += Int(runCount[Int(-1 - entry)])
                    continue
                }
                let item = Int(entry)
                let isShown = shown(item)
                let isKept = kept(item)
                if isShown, !isKept {
                    if case .delete(let at, let count)? = edits.last, at == position {
                        edits[edits.count - 1] = .delete(at: at, count: count + 1)
                    } else {
                        edits.append(.delete(at: position, count: 1))
                    }
                } else if !isShown, isKept {
                    if case .insert(let at, var typed)? = edits.last, at + typed.count == position {
                        // Removed first, so that the run's array is not shared and grows in place.
                        edits.removeLast()
                        typed.append(scalars[item])
                        edits.append(.insert(at: at, scalars: typed))
                    } else {
                        edits.append(.insert(at: position, scalars: [scalars[item]]))
                    }
                    position += 1
                } else if isShown {
                    position += 1
                }
            }
        }
        return edits
    }

    /// The sorted, duplicate-free form of a set of events (not reduced to its maximal elements: the walk in
    /// ``move(to:)`` treats an ancestor named beside its descendant as already included).
    static func frontier(_ events: [Int32]) -> [Int32] {
        // Most events have one parent.
        if events.count < 2 || (events.count == 2 && events[0] < events[1]) { return events }
        var unique: [Int32] = []
        unique.reserveCapacity(events.count)
        for event in events.sorted() where unique.last != event { unique.append(event) }
        return unique
    }

    // MARK: Versions

    /// Moves the prepare view from `current` to `target`: retreats the events only `current` holds (latest first),
    /// then advances those only `target` holds (earliest first).
    mutating func move(to target: [Int32]) {
        guard target != current else { return }
        var retreat: [Int32] = []
        var advance: [Int32] = []
        swap(&retreat, &moveRetreat)
        swap(&advance, &moveAdvance)
        // Latest first, both: retreated so, advanced in the order they were made.
        difference(from: current, to: target, onlyFrom: &retreat, onlyTo: &advance)
        for event in retreat { self.retreat(event) }
        for event in advance.reversed() { self.advance(event) }
        retreat.removeAll(keepingCapacity: true)
        advance.removeAll(keepingCapacity: true)
        swap(&retreat, &moveRetreat)
        swap(&advance, &moveAdvance)
        current.removeAll(keepingCapacity: true)
        current.append(contentsOf: target)
        refreshLengths()
    }

    /// Reads the entries' lengths again in the blocks where items changed visibility while the view moved.
    private mutating func refreshLengths() {
        for identity in staleBlocks {
            let position = blockPosition[Int(identity)]
            // In place: a copy of the lengths would be a new array per block.
            for index in blocks[position].entries.indices {
                let length = Int32(visibleLength(of: blocks[position].entries[index]))
                blocks[position].lengths[index] = length
            }
            blocks[position].isStale = false
        }
        staleBlocks.removeAll(keepingCapacity: true)
    }

    /// The events in the past of `from` and not of `to`, and the other way round: a walk back from both frontiers,
    /// latest event first, that stops when every event still to visit is in both pasts.
    mutating func difference(from: [Int32], to: [Int32]) -> (onlyFrom: [Int32], onlyTo: [Int32]) {
        var onlyFrom: [Int32] = []
        var onlyTo: [Int32] = []
        difference(from: from, to: to, onlyFrom: &onlyFrom, onlyTo: &onlyTo)
        return (onlyFrom, onlyTo)
    }

    /// ``difference(from:to:)``, appending the events to `onlyFrom` and `onlyTo`, each in descending order (the walk
    /// visits the latest event first, and an event's parents are earlier events).
    mutating func difference(from: [Int32], to: [Int32], onlyFrom: inout [Int32], onlyTo: inout [Int32]) {
        // Flags by event: 1 reached from `from`, 2 from `to`, 3 both; the events reached, to clear them after.
        var flags: [UInt8] = []
        var reached: [Int32] = []
        var queue = Heap<Int32>()
        swap(&flags, &walkFlags)
        swap(&reached, &walkReached)
        swap(&queue, &walkQueue)
        if flags.count < eventCount {
            flags.append(contentsOf: repeatElement(0, count: eventCount - flags.count))
        }
        var pendingOnlyOneSide = 0
        func push(
            _ event: Int32, _ flag: UInt8, into queue: inout Heap<Int32>, flags: inout [UInt8], reached: inout [Int32]
        ) {
            let old = flags[Int(event)]
            if old != 0 {
                let merged = old | flag
                if merged != old {
                    flags[Int(event)] = merged
                    if merged == 3 { pendingOnlyOneSide -= 1 }
                }
            } else {
                flags[Int(event)] = flag
                reached.append(event)
                queue.insert(event)
                if flag != 3 { pendingOnlyOneSide += 1 }
            }
        }
        for event in from { push(event, 1, into: &queue, flags: &flags, reached: &reached) }
        for event in to { push(event, 2, into: &queue, flags: &flags, reached: &reached) }
        while pendingOnlyOneSide > 0, let event = queue.popMax() {
            let flag = flags[Int(event)]
            if flag != 3 { pendingOnlyOneSide -= 1 }
            switch flag {
            case 1: onlyFrom.append(event)
            case 2: onlyTo.append(event)
            default: break
            }
            var link = Int(parentStart[Int(event)])
            let end = Int(parentStart[Int(event) + 1])
            while link < end {
                push(parentLinks[link], flag, into: &queue, flags: &flags, reached: &reached)
                link += 1
            }
        }
        for event in reached { flags[Int(event)] = 0 }
        reached.removeAll(keepingCapacity: true)
        // Emptied in place: the heap keeps its storage for the next walk.
        queue.removeAll { _ in true }
        swap(&flags, &walkFlags)
        swap(&reached, &walkReached)
        swap(&queue, &walkQueue)
    }

    private mutating func retreat(_ event: Int32) {
        for target in deleteTargets[deletes[Int(event)]] {
            setPrepare(target, prepare[Int(target)] - 1)
        }
        for item in inserted[Int(event)] where itemEvent[Int(item)] == event { setPrepare(item, 0) }
    }

    private mutating func advance(_ event: Int32) {
        for item in inserted[Int(event)] where itemEvent[Int(item)] == event { setPrepare(item, 1) }
        for target in deleteTargets[deletes[Int(event)]] {
            setPrepare(target, prepare[Int(target)] + 1)
        }
    }

    /// Sets the prepare state of `item`, whose entry is at `index` of its block when known; otherwise the block's
    /// lengths are left stale, to be read again once the view has moved.
    mutating func setPrepare(_ item: Int32, _ value: UInt32, index: Int? = nil) {
        let old = prepare[Int(item)]
        guard old != value else { return }
        prepare[Int(item)] = value
        listVersion += 1
        if old == 1 || value == 1 {
            let position = blockPosition[Int(blockOf[Int(item)])]
            adjustVisible(ofBlockAt: position, by: value == 1 ? 1 : -1)
            if let index {
                blocks[position].lengths[index] = value == 1 ? 1 : 0
            } else if !blocks[position].isStale {
                blocks[position].isStale = true
                staleBlocks.append(blocks[position].identity)
            }
        }
    }

    // MARK: Edits

    private mutating func apply(_ edit: TextEdit, by event: Int32, precedes: (Int32, Int32) -> Bool) {
        switch edit {
        case .insert(let position, let text):
            guard position >= 0, position <= visibleCount else {
                skippedEdits += 1
                return
            }
            insert(text, at: position, by: event, precedes: precedes)
        case .append(let text):
            insert(text, at: visibleCount, by: event, precedes: precedes)
        case .delete(let position, let count):
            let length = visibleCount
            guard position >= 0, count >= 0, position <= length, count <= length - position else {
                skippedEdits += 1
                return
            }
            delete(count, at: position, by: event)
        case .replaceAll(let new):
            for part in TextEdit.splice(from: visibleScalars(), to: new) {
                switch part {
                case .delete(let position, let count): delete(count, at: position, by: event)
                case .insert(let position, let scalars): insert(scalars, at: position, by: event, precedes: precedes)
                case .append, .replaceAll: break
                }
            }
        }
    }

    private func visibleScalars() -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(visibleCount)
        for block in blocks where block.visible > 0 {
            for entry in block.entries {
                if entry < 0 {
                    let run = Int(-1 - entry)
                    let start = Int(runStart[run])
                    result += base[start..<(start + Int(runCount[run]))]
                } else if prepare[Int(entry)] == 1 {
                    result.append(scalars[Int(entry)])
                }
            }
        }
        return result
    }
}
