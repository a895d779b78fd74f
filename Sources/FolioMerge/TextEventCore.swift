import HeapModule

/// The replay behind ``TextEventGraph``, free of the agents' type so that it compiles to specialized code once, in
/// this module: ties between agents are decided by the caller (`precedes`, given events' indexes).
struct TextEventCore {
    private static var blockCapacity: Int { 128 }
    private static var none: Int32 { -1 }

    // Items, by id (the order they were made). Items below `baseCount` are the base text's.
    private var scalars: [Unicode.Scalar] = []
    private var originLeft: [Int32] = []
    private var originRight: [Int32] = []
    private var itemEvent: [Int32] = []
    /// 0: not in the prepare view's version; 1: visible in it; 1 + k: deleted by k events of it.
    private var prepare: [UInt32] = []
    private var deleted: [Bool] = []
    private var blockOf: [Int32] = []
    private let baseCount: Int

    // The list, in blocks.
    private struct Block {
        var items: [Int32]
        var visible: Int
        let identity: Int32
    }
    private var blocks: [Block] = []
    private var blockPosition: [Int] = []
    /// A Fenwick tree of the blocks' visible counts, by block position (1-based), rebuilt when a block is added.
    private var visibleTree: [Int] = [0]
    /// The number of visible items.
    private var visibleCount = 0

    // Events.
    private var parents: [[Int32]] = []
    private var inserted: [Range<Int32>] = []
    private var deleteTargets: [Int32] = []
    private var deletes: [Range<Int>] = []
    /// The version the prepare view shows, as its frontier.
    private var current: [Int32] = []

    /// Edits that were not applied because a position or count was out of bounds.
    private(set) var skippedEdits = 0

    /// A graph whose events start from `base`.
    ///
    /// - Complexity: O(*n*) for *n* base scalars.
    init(base: [Unicode.Scalar]) {
        baseCount = base.count
        for (index, scalar) in base.enumerated() {
            appendItem(scalar, left: index == 0 ? Self.none : Int32(index - 1), right: Self.none, event: Self.none)
            prepare[index] = 1
        }
        var id: Int32 = 0
        while Int(id) < base.count {
            let end = min(Int(id) + Self.blockCapacity / 2, base.count)
            appendBlock(items: Array(id..<Int32(end)), visible: end - Int(id))
            id = Int32(end)
        }
        rebuildVisibleTree()
    }

    /// The number of events.
    var eventCount: Int { parents.count }

    /// The merged text: every event applied.
    ///
    /// - Complexity: O(*n*) for *n* items.
    var text: String {
        var result = String.UnicodeScalarView()
        for block in blocks {
            for item in block.items where !deleted[Int(item)] { result.append(scalars[Int(item)]) }
        }
        return String(result)
    }

    /// Adds an event made on `eventParents` (indexes of earlier events, each checked by the caller; empty: the base
    /// text) and applies its edits in order; `precedes` orders two events' agents. Returns the event's index.
    mutating func add(parents eventParents: [Int32], edits: [TextEdit], precedes: (Int32, Int32) -> Bool) -> Int {
        let event = Int32(parents.count)
        let frontier = Self.frontier(eventParents)
        move(to: frontier)
        parents.append(frontier)
        let firstItem = Int32(scalars.count)
        let firstDelete = deleteTargets.count
        for edit in edits {
            apply(edit, by: event, precedes: precedes)
        }
        inserted.append(firstItem..<Int32(scalars.count))
        deletes.append(firstDelete..<deleteTargets.count)
        current = [event]
        return Int(event)
    }

    /// Adds an event made on `eventParents` whose text is that of `kept` (events in its parents' past): the
    /// characters its parents' version shows and `kept`'s does not are deleted, and those `kept`'s version shows
    /// and its parents' version deleted are typed again, each at its place. Returns the event's index.
    mutating func add(parents eventParents: [Int32], keeping kept: [Int32], precedes: (Int32, Int32) -> Bool) -> Int {
        move(to: Self.frontier(kept))
        var inKept = [Bool](repeating: false, count: scalars.count)
        for block in blocks where block.visible > 0 {
            for item in block.items where prepare[Int(item)] == 1 { inKept[Int(item)] = true }
        }
        move(to: Self.frontier(eventParents))
        var edits: [TextEdit] = []
        var position = 0
        for block in blocks {
            for item in block.items {
                let visible = prepare[Int(item)] == 1
                if visible, !inKept[Int(item)] {
                    if case .delete(let at, let count)? = edits.last, at == position {
                        edits[edits.count - 1] = .delete(at: at, count: count + 1)
                    } else {
                        edits.append(.delete(at: position, count: 1))
                    }
                } else if !visible, inKept[Int(item)] {
                    if case .insert(let at, let typed)? = edits.last, at + typed.count == position {
                        edits[edits.count - 1] = .insert(at: at, scalars: typed + [scalars[Int(item)]])
                    } else {
                        edits.append(.insert(at: position, scalars: [scalars[Int(item)]]))
                    }
                    position += 1
                } else if visible {
                    position += 1
                }
            }
        }
        return add(parents: eventParents, edits: edits, precedes: precedes)
    }

    /// The sorted, duplicate-free form of a set of events (not reduced to its maximal elements: the walk in
    /// ``move(to:)`` treats an ancestor named beside its descendant as already included).
    private static func frontier(_ events: [Int32]) -> [Int32] {
        var sorted = events.sorted()
        var unique: [Int32] = []
        unique.reserveCapacity(sorted.count)
        for event in sorted where unique.last != event { unique.append(event) }
        sorted = unique
        return sorted
    }

    // MARK: Versions

    /// Moves the prepare view from `current` to `target`: retreats the events only `current` holds (latest first),
    /// then advances those only `target` holds (earliest first).
    private mutating func move(to target: [Int32]) {
        guard target != current else { return }
        let (retreat, advance) = difference(from: current, to: target)
        for event in retreat.sorted(by: >) { self.retreat(event) }
        for event in advance.sorted() { self.advance(event) }
        current = target
    }

    /// The events in the past of `from` and not of `to`, and the other way round: a walk back from both frontiers,
    /// latest event first, that stops when every event still to visit is in both pasts.
    private func difference(from: [Int32], to: [Int32]) -> (onlyFrom: [Int32], onlyTo: [Int32]) {
        // Flags: 1 reached from `from`, 2 from `to`, 3 both.
        var queue = Heap<Int32>()
        var flags: [Int32: UInt8] = [:]
        var pendingOnlyOneSide = 0
        func push(_ event: Int32, _ flag: UInt8, into queue: inout Heap<Int32>, flags: inout [Int32: UInt8]) {
            if let old = flags[event] {
                let merged = old | flag
                if merged != old {
                    flags[event] = merged
                    if merged == 3 { pendingOnlyOneSide -= 1 }
                }
            } else {
                flags[event] = flag
                queue.insert(event)
                if flag != 3 { pendingOnlyOneSide += 1 }
            }
        }
        for event in from { push(event, 1, into: &queue, flags: &flags) }
        for event in to { push(event, 2, into: &queue, flags: &flags) }
        var onlyFrom: [Int32] = []
        var onlyTo: [Int32] = []
        while pendingOnlyOneSide > 0, let event = queue.popMax() {
            let flag = flags[event]!
            if flag != 3 { pendingOnlyOneSide -= 1 }
            switch flag {
            case 1: onlyFrom.append(event)
            case 2: onlyTo.append(event)
            default: break
            }
            for parent in parents[Int(event)] { push(parent, flag, into: &queue, flags: &flags) }
        }
        return (onlyFrom, onlyTo)
    }

    private mutating func retreat(_ event: Int32) {
        for target in deleteTargets[deletes[Int(event)]] {
            setPrepare(target, prepare[Int(target)] - 1)
        }
        for item in inserted[Int(event)] { setPrepare(item, 0) }
    }

    private mutating func advance(_ event: Int32) {
        for item in inserted[Int(event)] { setPrepare(item, 1) }
        for target in deleteTargets[deletes[Int(event)]] {
            setPrepare(target, prepare[Int(target)] + 1)
        }
    }

    private mutating func setPrepare(_ item: Int32, _ value: UInt32) {
        let old = prepare[Int(item)]
        guard old != value else { return }
        prepare[Int(item)] = value
        if old == 1 || value == 1 {
            adjustVisible(ofBlockAt: blockPosition[Int(blockOf[Int(item)])], by: value == 1 ? 1 : -1)
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
            let old = visibleScalars()
            var prefix = 0
            while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < old.count - prefix, suffix < new.count - prefix,
                old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
            {
                suffix += 1
            }
            if old.count - prefix - suffix > 0 { delete(old.count - prefix - suffix, at: prefix, by: event) }
            if new.count - prefix - suffix > 0 {
                insert(Array(new[prefix..<(new.count - suffix)]), at: prefix, by: event, precedes: precedes)
            }
        }
    }

    private mutating func adjustVisible(ofBlockAt position: Int, by delta: Int) {
        blocks[position].visible += delta
        visibleCount += delta
        var node = position + 1
        while node < visibleTree.count {
            visibleTree[node] += delta
            node += node & -node
        }
    }

    private mutating func rebuildVisibleTree() {
        visibleTree = [0] + blocks.map(\.visible)
        visibleCount = visibleTree.reduce(0, +)
        for node in 1..<visibleTree.count {
            let parent = node + (node & -node)
            if parent < visibleTree.count { visibleTree[parent] += visibleTree[node] }
        }
    }

    private func visibleScalars() -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        for block in blocks where block.visible > 0 {
            for item in block.items where prepare[Int(item)] == 1 { result.append(scalars[Int(item)]) }
        }
        return result
    }

    /// A place in the list: a block's position and an index in it. `(blocks.count, 0)` is the end.
    private struct Place: Comparable {
        var block: Int
        var index: Int
        static func < (a: Place, b: Place) -> Bool { (a.block, a.index) < (b.block, b.index) }
    }

    private var end: Place { Place(block: blocks.count, index: 0) }

    /// The place of the visible item that `position` visible items precede, or the end.
    ///
    /// - Complexity: O(log *b* + *B*) for *b* blocks of at most *B* items.
    private func placeOfVisible(_ position: Int) -> Place {
        guard position < visibleCount else { return end }
        // The last block position whose preceding blocks hold at most `position` visible items.
        var block = 0
        var remaining = position
        var step = 1
        while step * 2 < visibleTree.count { step *= 2 }
        while step > 0 {
            if block + step < visibleTree.count, visibleTree[block + step] <= remaining {
                block += step
                remaining -= visibleTree[block]
            }
            step /= 2
        }
        for (index, item) in blocks[block].items.enumerated() where prepare[Int(item)] == 1 {
            if remaining == 0 { return Place(block: block, index: index) }
            remaining -= 1
        }
        return end
    }

    private func item(at place: Place) -> Int32 { blocks[place.block].items[place.index] }

    private func next(_ place: Place) -> Place {
        if place.index + 1 < blocks[place.block].items.count {
            return Place(block: place.block, index: place.index + 1)
        }
        var block = place.block + 1
        while block < blocks.count, blocks[block].items.isEmpty { block += 1 }
        return Place(block: block, index: 0)
    }

    private func previous(_ place: Place) -> Place? {
        if place.index > 0 { return Place(block: place.block, index: place.index - 1) }
        var block = place.block - 1
        while block >= 0 {
            if !blocks[block].items.isEmpty { return Place(block: block, index: blocks[block].items.count - 1) }
            block -= 1
        }
        return nil
    }

    private func place(of item: Int32) -> Place {
        let block = blockPosition[Int(blockOf[Int(item)])]
        return Place(block: block, index: blocks[block].items.firstIndex(of: item)!)
    }

    private mutating func insert(
        _ text: [Unicode.Scalar], at position: Int, by event: Int32, precedes: (Int32, Int32) -> Bool
    ) {
        let rightPlace = placeOfVisible(position)
        let right = rightPlace == end ? Self.none : item(at: rightPlace)
        var left = Self.none
        var cursor = previous(rightPlace)
        while let place = cursor {
            let candidate = item(at: place)
            if prepare[Int(candidate)] != 0 {
                left = candidate
                break
            }
            cursor = previous(place)
        }
        for scalar in text {
            let id = Int32(scalars.count)
            appendItem(scalar, left: left, right: right, event: event)
            prepare[Int(id)] = 1
            integrate(id, precedes: precedes)
            left = id
        }
    }

    private mutating func appendItem(_ scalar: Unicode.Scalar, left: Int32, right: Int32, event: Int32) {
        scalars.append(scalar)
        originLeft.append(left)
        originRight.append(right)
        itemEvent.append(event)
        prepare.append(0)
        deleted.append(false)
        blockOf.append(Self.none)
    }

    /// Places item `id` between its origins, after the concurrent items that precede it by the YjsMod rule.
    private mutating func integrate(_ id: Int32, precedes: (Int32, Int32) -> Bool) {
        let leftPlace = originLeft[Int(id)] == Self.none ? nil : place(of: originLeft[Int(id)])
        let rightPlace = originRight[Int(id)] == Self.none ? end : place(of: originRight[Int(id)])
        let start = leftPlace.map(next) ?? firstPlace
        var destination = start
        var scanning = false
        var cursor = start
        while true {
            if !scanning { destination = cursor }
            if cursor == end || cursor == rightPlace { break }
            let other = item(at: cursor)
            let otherLeft = originLeft[Int(other)] == Self.none ? nil : place(of: originLeft[Int(other)])
            let otherRight = originRight[Int(other)] == Self.none ? end : place(of: originRight[Int(other)])
            if Self.precedes(otherLeft, leftPlace) { break }
            if otherLeft == leftPlace {
                if otherRight == rightPlace, precedes(itemEvent[Int(id)], itemEvent[Int(other)]) { break }
                scanning = otherRight < rightPlace
            }
            cursor = next(cursor)
        }
        place(id, at: destination)
    }

    /// Whether origin place `a` is before `b` (`nil`: before the first item).
    private static func precedes(_ a: Place?, _ b: Place?) -> Bool {
        guard let b else { return false }
        guard let a else { return true }
        return a < b
    }

    private var firstPlace: Place {
        var block = 0
        while block < blocks.count, blocks[block].items.isEmpty { block += 1 }
        return Place(block: block, index: 0)
    }

    private mutating func place(_ id: Int32, at destination: Place) {
        var target = destination
        if blocks.isEmpty {
            appendBlock(items: [], visible: 0)
            rebuildVisibleTree()
            target = Place(block: 0, index: 0)
        } else if target.block == blocks.count {
            target = Place(block: blocks.count - 1, index: blocks[blocks.count - 1].items.count)
        }
        blocks[target.block].items.insert(id, at: target.index)
        blockOf[Int(id)] = blocks[target.block].identity
        if prepare[Int(id)] == 1 { adjustVisible(ofBlockAt: target.block, by: 1) }
        if blocks[target.block].items.count > Self.blockCapacity { split(target.block) }
    }

    private mutating func appendBlock(items: [Int32], visible: Int) {
        let identity = Int32(blockPosition.count)
        blockPosition.append(blocks.count)
        blocks.append(Block(items: items, visible: visible, identity: identity))
        for item in items { blockOf[Int(item)] = identity }
    }

    private mutating func split(_ position: Int) {
        let items = blocks[position].items
        let half = items.count / 2
        let moved = Array(items[half...])
        blocks[position].items.removeSubrange(half...)
        var visible = 0
        for item in moved where prepare[Int(item)] == 1 { visible += 1 }
        blocks[position].visible -= visible
        let identity = Int32(blockPosition.count)
        blockPosition.append(position + 1)
        blocks.insert(Block(items: moved, visible: visible, identity: identity), at: position + 1)
        for item in moved { blockOf[Int(item)] = identity }
        for later in (position + 2)..<blocks.count { blockPosition[Int(blocks[later].identity)] = later }
        rebuildVisibleTree()
    }

    private mutating func delete(_ count: Int, at position: Int, by event: Int32) {
        guard count > 0 else { return }
        var place = placeOfVisible(position)
        var remaining = count
        while remaining > 0, place != end {
            let target = item(at: place)
            if prepare[Int(target)] == 1 {
                setPrepare(target, 2)
                deleted[Int(target)] = true
                deleteTargets.append(target)
                remaining -= 1
            }
            place = next(place)
        }
    }
}
