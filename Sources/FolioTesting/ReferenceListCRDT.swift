import FolioMerge

/// A plain list CRDT, slow and obviously correct, to check `TextEventGraph` and the documents that use it against.
///
/// One array holds every item ever inserted, in list order. An item belongs to the version of a set of events when
/// the event that inserted it is in the set (base items belong to every version), and is visible in it when no
/// event of the set deleted it. An edit's positions are read in the view of the event's own version (its parents'
/// past, the event itself, so its earlier edits count): nothing is moved back and forth, every view is filtered
/// afresh. A new item goes between the last item of that version before the position's visible item and that item,
/// placed among concurrent items by the YjsMod rule, with ties broken by agent.
public struct ReferenceListCRDT {
    struct Item {
        var scalar: Unicode.Scalar
        var id: Int
        /// The inserting event; -1 for the base text.
        var event: Int
        var originLeft: Int?
        var originRight: Int?
        var deletedBy: Set<Int> = []
    }

    private var items: [Item] = []
    private var parents: [[Int]] = []
    private var agents: [Int] = []
    private var nextID = 0

    /// A list holding `base`, which every version starts from.
    public init(base: String = "") {
        for scalar in base.unicodeScalars {
            items.append(Item(scalar: scalar, id: nextID, event: -1, originLeft: items.last?.id, originRight: nil))
            nextID += 1
        }
    }

    /// Every event applied.
    public var text: String {
        String(String.UnicodeScalarView(items.filter { $0.deletedBy.isEmpty }.map(\.scalar)))
    }

    /// The text of the version made of `events`' past.
    public func text(atVersionOf events: [Int]) -> String {
        let version = past(of: events)
        return String(String.UnicodeScalarView(items.filter { isVisible($0, in: version) }.map(\.scalar)))
    }

    /// Every event applied, except what `reversed` (events) did: the items they typed are left out, and the items
    /// they deleted show unless another event deleted them too.
    public func text(reversing reversed: Set<Int>) -> String {
        let kept = items.filter { item in
            !reversed.contains(item.event) && item.deletedBy.subtracting(reversed).isEmpty
        }
        return String(String.UnicodeScalarView(kept.map(\.scalar)))
    }

    /// Every event in the past of `events`, themselves included.
    public func past(of events: [Int]) -> Set<Int> {
        var result = Set<Int>()
        var pending = events
        while let event = pending.popLast() {
            if result.insert(event).inserted { pending += parents[event] }
        }
        return result
    }

    /// Adds an event by `agent` made on `parents` (earlier events' indexes; none: the base) and applies its edits;
    /// returns its index. Concurrent items at one place are ordered by agent, the lower first.
    public mutating func add(agent: Int, parents eventParents: [Int], edits: [TextEdit]) -> Int {
        let event = parents.count
        parents.append(eventParents)
        agents.append(agent)
        let version = past(of: [event])
        for edit in edits {
            apply(edit, by: event, in: version)
        }
        return event
    }

    /// Adds an event by `agent` made on `parents` whose text is the text of `kept` (events in the past of
    /// `parents`): the items the parents' version shows and `kept`'s does not are deleted, and the items `kept`'s
    /// version shows and the parents' version does not are typed again where they stand, as new items. Returns the
    /// event's index.
    public mutating func add(agent: Int, parents eventParents: [Int], keeping kept: [Int]) -> Int {
        let keptVersion = past(of: kept)
        let version = past(of: eventParents)
        var edits: [TextEdit] = []
        var position = 0
        for item in items where belongs(item, to: version) || belongs(item, to: keptVersion) {
            switch (isVisible(item, in: version), isVisible(item, in: keptVersion)) {
            case (true, false):
                edits.append(.delete(at: position, count: 1))
            case (false, true):
                edits.append(.insert(at: position, scalars: [item.scalar]))
                position += 1
            case (true, true):
                position += 1
            case (false, false):
                break
            }
        }
        return add(agent: agent, parents: eventParents, edits: edits)
    }

    /// The merge of the versions of events `first` and `second`, by the definition of an overlap, with nothing
    /// kept between calls: the items of their common version (their pasts' intersection), and of each, are read
    /// afresh; stretches lie between items of the common version both show, and one overlaps when both deleted an
    /// item of the common version there and did not both delete every such item and type nothing. The text is the
    /// union version's, except in overlapping stretches, which show `first`'s items.
    public func merge(of first: Int, and second: Int) -> TextMerge {
        let one = past(of: [first])
        let other = past(of: [second])
        let common = one.intersection(other)
        let union = one.union(other)
        var overlaps: [TextOverlap] = []
        var text = String.UnicodeScalarView()
        var stretch: [Item] = []
        var line = 1
        var column = 1
        var positions: [Int: TextOverlap.Position] = [:]
        func close() {
            let commonItems = stretch.filter { isVisible($0, in: common) }
            let deletedByBoth = commonItems.contains { !isVisible($0, in: one) && !isVisible($0, in: other) }
            let sameDeletion = stretch.allSatisfy { !isVisible($0, in: one) && !isVisible($0, in: other) }
            if deletedByBoth, !sameDeletion {
                overlaps.append(
                    TextOverlap(
                        versions: [0, 1], start: positions[commonItems.first!.id]!,
                        end: positions[commonItems.last!.id]!,
                        base: String(String.UnicodeScalarView(commonItems.map(\.scalar))),
                        texts: [one, other].map { version in
                            String(
                                String.UnicodeScalarView(stretch.filter { isVisible($0, in: version) }.map(\.scalar)))
                        }))
                text += stretch.filter { isVisible($0, in: one) }.map(\.scalar)
            } else {
                text += stretch.filter { isVisible($0, in: union) }.map(\.scalar)
            }
            stretch = []
        }
        for item in items {
            let isCommon = isVisible(item, in: common)
            if isCommon {
                positions[item.id] = TextOverlap.Position(line: line, column: column)
                if item.scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            if isCommon, isVisible(item, in: one), isVisible(item, in: other) {
                close()
                text.append(item.scalar)
            } else {
                stretch.append(item)
            }
        }
        close()
        return TextMerge(text: String(text), overlaps: overlaps)
    }

    private func belongs(_ item: Item, to version: Set<Int>) -> Bool {
        item.event == -1 || version.contains(item.event)
    }

    private func isVisible(_ item: Item, in version: Set<Int>) -> Bool {
        belongs(item, to: version) && item.deletedBy.isDisjoint(with: version)
    }

    private mutating func apply(_ edit: TextEdit, by event: Int, in version: Set<Int>) {
        let view = items.indices.filter { isVisible(items[$0], in: version) }
        switch edit {
        case .insert(let position, let scalars):
            guard position >= 0, position <= view.count else { return }
            let rightIndex = position < view.count ? view[position] : items.count
            var left = items[..<rightIndex].last { belongs($0, to: version) }?.id
            let right = rightIndex < items.count ? items[rightIndex].id : nil
            for scalar in scalars {
                let item = Item(scalar: scalar, id: nextID, event: event, originLeft: left, originRight: right)
                nextID += 1
                integrate(item)
                left = item.id
            }
        case .append(let scalars):
            apply(.insert(at: view.count, scalars: scalars), by: event, in: version)
        case .delete(let position, let count):
            guard position >= 0, count >= 0, position + count <= view.count else { return }
            for index in view[position..<(position + count)] { items[index].deletedBy.insert(event) }
        case .replaceAll(let new):
            for edit in TextEdit.splice(from: view.map { items[$0].scalar }, to: new) {
                apply(edit, by: event, in: version)
            }
        }
    }

    private func index(of id: Int) -> Int { items.firstIndex { $0.id == id }! }

    private mutating func integrate(_ item: Item) {
        let left = item.originLeft.map(index(of:)) ?? -1
        let right = item.originRight.map(index(of:)) ?? items.count
        var destination = left + 1
        var scanning = false
        var cursor = left + 1
        while true {
            if !scanning { destination = cursor }
            if cursor == items.count || cursor == right { break }
            let other = items[cursor]
            let otherLeft = other.originLeft.map(index(of:)) ?? -1
            let otherRight = other.originRight.map(index(of:)) ?? items.count
            if otherLeft < left
                || (otherLeft == left && otherRight == right && agents[item.event] < agents[other.event])
            {
                break
            }
            if otherLeft == left { scanning = otherRight < right }
            cursor += 1
        }
        items.insert(item, at: destination)
    }
}
