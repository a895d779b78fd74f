/// The list of ``TextEventCore``: blocks of entries (items and placeholder runs), found by visible position through
/// a Fenwick tree of the blocks' visible counts.
extension TextEventCore {
    /// A place in the list: a block's position and an entry's index in it. `(blocks.count, 0)` is the end.
    struct Place: Comparable {
        var block: Int
        var index: Int
        static func < (a: Place, b: Place) -> Bool { (a.block, a.index) < (b.block, b.index) }
    }

    var end: Place { Place(block: blocks.count, index: 0) }

    func entry(at place: Place) -> Int32 { blocks[place.block].entries[place.index] }

    /// The item at `place`, which holds an item, not a run.
    func item(at place: Place) -> Int32 {
        let entry = entry(at: place)
        assert(entry >= 0, "a placeholder run where an item was expected")
        return entry
    }

    /// The visible scalars `entry` stands for in the prepare view.
    @inline(__always)
    func visibleLength(of entry: Int32) -> Int {
        entry < 0 ? Int(runCount[Int(-1 - entry)]) : (prepare[Int(entry)] == 1 ? 1 : 0)
    }

    /// The place of the entry holding the visible scalar that `position` visible scalars precede, and the
    /// scalar's offset in it (0 for an item); the end when `position` is the length.
    ///
    /// - Complexity: O(log *b* + *B*) for *b* blocks of at most *B* entries.
    func placeOfVisible(_ position: Int) -> (place: Place, offset: Int) {
        guard position < visibleCount else { return (end, 0) }
        // The last block position whose preceding blocks hold at most `position` visible scalars. Each step is
        // taken or not by selecting values rather than by a branch, which random positions would mispredict.
        var block = 0
        var remaining = position
        visibleTree.withUnsafeBufferPointer { tree in
            var step = visibleTreeTop
            while step > 0 {
                let next = block + step
                if next < tree.count {
                    let count = tree[next]
                    let take = count <= remaining
                    block = take ? next : block
                    remaining = take ? remaining - count : remaining
                }
                step &>>= 1
            }
        }
        return blocks[block].lengths.withUnsafeBufferPointer { lengths in
            var index = 0
            if let start = lengths.baseAddress {
                // Eight entries at a time while the position lies past them.
                let raw = UnsafeRawPointer(start)
                while index + 8 <= lengths.count {
                    let chunk = Int(
                        raw.loadUnaligned(fromByteOffset: index * MemoryLayout<Int32>.stride, as: SIMD8<Int32>.self)
                            .wrappedSum())
                    guard remaining >= chunk else { break }
                    remaining -= chunk
                    index += 8
                }
            }
            while index < lengths.count {
                let length = Int(lengths[index])
                if remaining < length { return (Place(block: block, index: index), remaining) }
                remaining -= length
                index += 1
            }
            return (end, 0)
        }
    }

    func next(_ place: Place) -> Place {
        if place.index + 1 < blocks[place.block].entries.count {
            return Place(block: place.block, index: place.index + 1)
        }
        var block = place.block + 1
        while block < blocks.count, blocks[block].entries.isEmpty { block += 1 }
        return Place(block: block, index: 0)
    }

    func previous(_ place: Place) -> Place? {
        if place.index > 0 { return Place(block: place.block, index: place.index - 1) }
        var block = place.block - 1
        while block >= 0 {
            if !blocks[block].entries.isEmpty { return Place(block: block, index: blocks[block].entries.count - 1) }
            block -= 1
        }
        return nil
    }

    /// The place of `item`.
    ///
    /// - Complexity: O(*B*) for blocks of at most *B* entries.
    func place(of item: Int32) -> Place {
        let block = blockPosition[Int(blockOf[Int(item)])]
        return Place(block: block, index: blocks[block].entries.firstIndex(of: item)!)
    }

    var firstPlace: Place {
        var block = 0
        while block < blocks.count, blocks[block].entries.isEmpty { block += 1 }
        return Place(block: block, index: 0)
    }

    /// Takes the scalars at `offsets` of the run at `place` out of it, as items of the base: the run keeps what
    /// precedes them, and a new run what follows. Returns the place of the first new item, and how many entries
    /// the block gained (places after the run in its block move by that many, unless ``splits`` grew).
    mutating func materialize(runAt place: Place, _ offsets: Range<Int>) -> (first: Place, growth: Int) {
        listVersion += 1
        let run = Int(-1 - entry(at: place))
        let start = Int(runStart[run])
        let count = Int(runCount[run])
        let identity = blocks[place.block].identity
        if offsets.count == 1, count > 1, offsets.lowerBound == 0 || offsets.upperBound == count {
            // One scalar off an end of the run (a delete moving forward, an origin next to the run): the run
            // shrinks and the item goes beside it, without building a replacement.
            let atStart = offsets.lowerBound == 0
            let id = appendItem(base[start + offsets.lowerBound], left: Self.none, right: Self.none, event: Self.none)
            prepare[Int(id)] = 1
            blockOf[Int(id)] = identity
            if atStart { runStart[run] += 1 }
            runCount[run] -= 1
            let index = atStart ? place.index : place.index + 1
            blocks[place.block].lengths[place.index] -= 1
            blocks[place.block].entries.insert(id, at: index)
            blocks[place.block].lengths.insert(1, at: index)
            if blocks[place.block].entries.count > Self.blockCapacity {
                split(place.block)
                return (self.place(of: id), 1)
            }
            return (Place(block: place.block, index: index), 1)
        }
        // The items get consecutive ids, so the entries are inserted as a range of ids: no array is built.
        let firstItem = Int32(scalars.count)
        for offset in offsets {
            let id = appendItem(base[start + offset], left: Self.none, right: Self.none, event: Self.none)
            prepare[Int(id)] = 1
            blockOf[Int(id)] = identity
        }
        let items = firstItem..<(firstItem + Int32(offsets.count))
        let block = place.block
        let first: Int
        var growth: Int
        if offsets.lowerBound > 0 {
            // The run keeps what precedes the scalars; the items, then a new run for what follows, come after it.
            runCount[run] = Int32(offsets.lowerBound)
            blocks[block].lengths[place.index] = Int32(offsets.lowerBound)
            first = place.index + 1
            blocks[block].entries.insert(contentsOf: items, at: first)
            blocks[block].lengths.insert(contentsOf: repeatElement(1, count: items.count), at: first)
            growth = items.count
            if offsets.upperBound < count {
                runStart.append(Int32(start + offsets.upperBound))
                runCount.append(Int32(count - offsets.upperBound))
                blocks[block].entries.insert(-Int32(runStart.count), at: first + items.count)
                blocks[block].lengths.insert(Int32(count - offsets.upperBound), at: first + items.count)
                growth += 1
            }
        } else if offsets.upperBound < count {
            // The run keeps what follows the scalars; the items come before it.
            runStart[run] = Int32(start + offsets.upperBound)
            runCount[run] = Int32(count - offsets.upperBound)
            blocks[block].lengths[place.index] = Int32(count - offsets.upperBound)
            first = place.index
            blocks[block].entries.insert(contentsOf: items, at: first)
            blocks[block].lengths.insert(contentsOf: repeatElement(1, count: items.count), at: first)
            growth = items.count
        } else {
            // The whole run: the items take its place.
            first = place.index
            blocks[block].entries[first] = firstItem
            blocks[block].lengths[first] = 1
            blocks[block].entries.insert(contentsOf: items.dropFirst(), at: first + 1)
            blocks[block].lengths.insert(contentsOf: repeatElement(1, count: items.count - 1), at: first + 1)
            growth = items.count - 1
        }
        if blocks[block].entries.count > Self.blockCapacity {
            split(block)
            return (self.place(of: firstItem), growth)
        }
        return (Place(block: block, index: first), growth)
    }

    @discardableResult
    mutating func appendItem(_ scalar: Unicode.Scalar, left: Int32, right: Int32, event: Int32) -> Int32 {
        scalars.append(scalar)
        originLeft.append(left)
        originRight.append(right)
        itemEvent.append(event)
        prepare.append(0)
        deleted.append(false)
        blockOf.append(Self.none)
        return Int32(scalars.count - 1)
    }

    mutating func insert(_ text: [Unicode.Scalar], at position: Int, by event: Int32, precedes: (Int32, Int32) -> Bool)
    {
        guard !text.isEmpty else { return }
        var left = Self.none
        var leftPlace: Place?
        var right = Self.none
        var rightPlace = end
        if let cursor, cursor.version == listVersion, cursor.position == position {
            (left, leftPlace, right) = (cursor.left, cursor.leftPlace, cursor.right)
            rightPlace = right == Self.none ? end : cursor.rightPlace
        } else {
            (left, leftPlace, right, rightPlace) = origins(at: position)
        }
        for scalar in text {
            let id = appendItem(scalar, left: left, right: right, event: event)
            prepare[Int(id)] = 1
            let before = splits
            let placed = integrate(id, leftPlace: leftPlace, rightPlace: rightPlace, precedes: precedes)
            left = id
            leftPlace = placed
            if right == Self.none {
                rightPlace = end
            } else if splits != before {
                rightPlace = self.place(of: right)
            } else if rightPlace.block == placed.block {
                rightPlace.index += 1
            }
        }
        cursor = Cursor(
            position: position + text.count, left: left, leftPlace: leftPlace, right: right, rightPlace: rightPlace,
            version: listVersion)
    }

    /// The origins of an insert at `position`, and their places: the visible item there (or none at the end) and
    /// the last item before it that the view holds (or none), each taken out of its run when in one.
    private mutating func origins(at position: Int) -> (Int32, Place?, Int32, Place) {
        var (rightPlace, offset) = placeOfVisible(position)
        if rightPlace != end, entry(at: rightPlace) < 0 {
            // Inside a run: its scalars on both sides of the place become items.
            let first = materialize(runAt: rightPlace, max(0, offset - 1)..<(offset + 1)).first
            rightPlace = offset > 0 ? next(first) : first
        }
        let right = rightPlace == end ? Self.none : item(at: rightPlace)
        var left = Self.none
        var leftPlace: Place?
        var cursor = previous(rightPlace)
        while let place = cursor {
            let candidate = entry(at: place)
            if candidate < 0 {
                // A run ends right before: its last scalar is the left origin.
                let count = Int(runCount[Int(-1 - candidate)])
                let before = splits
                let (first, growth) = materialize(runAt: place, (count - 1)..<count)
                leftPlace = first
                left = item(at: first)
                if splits != before {
                    rightPlace = right == Self.none ? end : self.place(of: right)
                } else if rightPlace.block == first.block {
                    rightPlace.index += growth
                }
                break
            }
            // A visible item (most often the one right before) is in the view without reading its state.
            if blocks[place.block].lengths[place.index] > 0 || prepare[Int(candidate)] != 0 {
                left = candidate
                leftPlace = place
                break
            }
            cursor = previous(place)
        }
        return (left, leftPlace, right, rightPlace)
    }

    /// Places item `id` between its origins (at `leftPlace`, `nil` before the first entry, and `rightPlace`),
    /// after the concurrent items that precede it by the YjsMod rule. Returns its place.
    private mutating func integrate(
        _ id: Int32, leftPlace: Place?, rightPlace: Place, precedes: (Int32, Int32) -> Bool
    ) -> Place {
        let start = leftPlace.map(next) ?? firstPlace
        var destination = start
        var scanning = false
        var cursor = start
        while true {
            if !scanning { destination = cursor }
            if cursor == end || cursor == rightPlace { break }
            // Between an item's origins there are only items of versions it did not see: never a run of the base,
            // which every version holds.
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
        return place(id, at: destination)
    }

    /// Whether origin place `a` is before `b` (`nil`: before the first item).
    private static func precedes(_ a: Place?, _ b: Place?) -> Bool {
        guard let b else { return false }
        guard let a else { return true }
        return a < b
    }

    /// Puts `id` at `destination` and returns its place.
    private mutating func place(_ id: Int32, at destination: Place) -> Place {
        listVersion += 1
        var target = destination
        if blocks.isEmpty {
            appendBlock(entries: [], lengths: [], visible: 0)
            rebuildVisibleTree()
            target = Place(block: 0, index: 0)
        } else if target.block == blocks.count {
            target = Place(block: blocks.count - 1, index: blocks[blocks.count - 1].entries.count)
        }
        blocks[target.block].entries.insert(id, at: target.index)
        blocks[target.block].lengths.insert(prepare[Int(id)] == 1 ? 1 : 0, at: target.index)
        blockOf[Int(id)] = blocks[target.block].identity
        if prepare[Int(id)] == 1 { adjustVisible(ofBlockAt: target.block, by: 1) }
        if blocks[target.block].entries.count > Self.blockCapacity {
            split(target.block)
            return place(of: id)
        }
        return target
    }

    private mutating func appendBlock(entries: [Int32], lengths: [Int32], visible: Int) {
        let identity = Int32(blockPosition.count)
        blockPosition.append(blocks.count)
        blocks.append(Block(entries: entries, lengths: lengths, visible: visible, identity: identity))
    }

    private mutating func split(_ position: Int) {
        splits += 1
        listVersion += 1
        let entries = blocks[position].entries
        let half = entries.count / 2
        let moved = Array(entries[half...])
        let movedLengths = Array(blocks[position].lengths[half...])
        blocks[position].entries.removeSubrange(half...)
        blocks[position].lengths.removeSubrange(half...)
        var visible = 0
        for length in movedLengths { visible += Int(length) }
        blocks[position].visible -= visible
        let identity = Int32(blockPosition.count)
        blockPosition.append(position + 1)
        blocks.insert(
            Block(entries: moved, lengths: movedLengths, visible: visible, identity: identity), at: position + 1)
        for entry in moved where entry >= 0 { blockOf[Int(entry)] = identity }
        for later in (position + 2)..<blocks.count { blockPosition[Int(blocks[later].identity)] = later }
        rebuildVisibleTree()
    }

    mutating func delete(_ count: Int, at position: Int, by event: Int32) {
        guard count > 0 else { return }
        if count == 1, var typed = cursor, typed.version == listVersion, typed.position == position + 1,
            let place = typed.leftPlace, prepare[Int(typed.left)] == 1
        {
            // The scalar just typed: the cursor's left origin stays the left origin of what is typed next there.
            setPrepare(typed.left, 2, index: place.index)
            deleted[Int(typed.left)] = true
            deleteTargets.append(typed.left)
            typed.position = position
            typed.version = listVersion
            cursor = typed
            return
        }
        var place: Place
        var offset = 0
        if let found = deleteCursor, found.version == listVersion, found.position == position {
            // Deleting forward from where the last delete ended: the items between hold nothing visible.
            place = found.place
        } else {
            (place, offset) = placeOfVisible(position)
        }
        var remaining = count
        while remaining > 0, place != end {
            let target = entry(at: place)
            if target < 0 {
                let taken = min(remaining, Int(runCount[Int(-1 - target)]) - offset)
                place = materialize(runAt: place, offset..<(offset + taken)).first
                offset = 0
                continue
            }
            if prepare[Int(target)] == 1 {
                setPrepare(target, 2, index: place.index)
                deleted[Int(target)] = true
                deleteTargets.append(target)
                remaining -= 1
            }
            place = next(place)
        }
        deleteCursor = (position, place, listVersion)
    }

    mutating func adjustVisible(ofBlockAt position: Int, by delta: Int) {
        blocks[position].visible += delta
        visibleCount += delta
        visibleTree.withUnsafeMutableBufferPointer { tree in
            var node = position + 1
            while node < tree.count {
                tree[node] += delta
                node += node & -node
            }
        }
    }

    mutating func rebuildVisibleTree() {
        // In place: a split rebuilds it, and the list may hold thousands of blocks.
        let count = blocks.count + 1
        if visibleTree.count < count {
            visibleTree.append(contentsOf: repeatElement(0, count: count - visibleTree.count))
        } else if visibleTree.count > count {
            visibleTree.removeLast(visibleTree.count - count)
        }
        var total = 0
        blocks.withUnsafeBufferPointer { blocks in
            visibleTree.withUnsafeMutableBufferPointer { tree in
                tree[0] = 0
                for (position, block) in blocks.enumerated() {
                    tree[position + 1] = block.visible
                    total += block.visible
                }
                for node in 1..<count {
                    let parent = node + (node & -node)
                    if parent < count { tree[parent] += tree[node] }
                }
            }
        }
        visibleCount = total
        var top = count > 1 ? 1 : 0
        while top * 2 < count { top *= 2 }
        visibleTreeTop = top
    }
}

extension TextEventCore {
    /// Traps unless the list is consistent: each block's visible count and the tree agree with its entries, every
    /// item's block is the one holding it, no two runs touch, and the base scalars appear in order, each once.
    func checkInvariants() {
        precondition(walkReached.isEmpty && walkQueue.isEmpty, "the walk's rooms hold events")
        precondition(moveRetreat.isEmpty && moveAdvance.isEmpty, "the move's rooms hold events")
        precondition(!walkFlags.contains { $0 != 0 }, "the walk left a flag")
        var total = 0
        var nextBase = 0
        var previousWasRun = false
        for (position, block) in blocks.enumerated() {
            precondition(blockPosition[Int(block.identity)] == position, "block \(block.identity) misplaced")
            var visible = 0
            precondition(block.lengths.count == block.entries.count, "block \(block.identity) lengths miscounted")
            for (index, entry) in block.entries.enumerated() {
                precondition(Int(block.lengths[index]) == visibleLength(of: entry), "a stale length")
                visible += visibleLength(of: entry)
                if entry < 0 {
                    let run = Int(-1 - entry)
                    precondition(!previousWasRun, "two runs touch")
                    precondition(runCount[run] > 0, "an empty run")
                    precondition(Int(runStart[run]) == nextBase, "run \(run) out of order")
                    nextBase += Int(runCount[run])
                    previousWasRun = true
                } else {
                    precondition(blockOf[Int(entry)] == block.identity, "item \(entry) in another block")
                    if itemEvent[Int(entry)] == Self.none {
                        precondition(base[nextBase] == scalars[Int(entry)], "base item \(entry) out of order")
                        nextBase += 1
                    }
                    previousWasRun = false
                }
            }
            precondition(visible == block.visible, "block \(block.identity) counts \(block.visible), holds \(visible)")
            total += visible
        }
        precondition(nextBase == base.count, "the list holds \(nextBase) of \(base.count) base scalars")
        precondition(total == visibleCount, "\(visibleCount) visible, \(total) held")
        var expected = [0] + blocks.map(\.visible)
        for node in 1..<expected.count {
            let parent = node + (node & -node)
            if parent < expected.count { expected[parent] += expected[node] }
        }
        precondition(expected == visibleTree, "the visible tree is stale")
    }
}
