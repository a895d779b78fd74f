/// The merge of several versions of a ``TextEventCore``, and where two of them overlap (``TextOverlap``).
extension TextEventCore {
    /// The merge of the versions at `heads` (events): the text of their merged version, and the stretches where two
    /// of them deleted the same scalars of their common text differently, which then show the first one's text.
    ///
    /// - Complexity: when no two versions deleted a scalar in common, the events that are not in the past of every
    ///   version and their deletes; otherwise O(*v* · *n* + *p* · *e*) more for *v* versions, *n* items, *p* pairs
    ///   that overlap and *e* entries of the list.
    mutating func merge(of heads: [Int32]) -> TextMerge {
        let frontier = Self.frontier(heads)
        // The pairs that may overlap: each deleted a scalar the other deleted too, in an event the other does not hold.
        var candidates: [(first: Int, second: Int, common: [Int32])] = []
        var marks: [Int32] = []
        var stamp: Int32 = 0
        for first in heads.indices {
            for second in heads.indices where second > first {
                let (onlyFirst, onlySecond) = difference(from: [heads[first]], to: [heads[second]])
                guard !onlyFirst.isEmpty, !onlySecond.isEmpty else { continue }
                if marks.isEmpty { marks = [Int32](repeating: -1, count: scalars.count) }
                stamp += 1
                for event in onlyFirst {
                    for target in deleteTargets[deletes[Int(event)]] { marks[Int(target)] = stamp }
                }
                let deletedByBoth = onlySecond.contains { event in
                    deleteTargets[deletes[Int(event)]].contains { marks[Int($0)] == stamp }
                }
                guard deletedByBoth else { continue }
                // The common past's frontier: the events just before the versions part.
                let apart = Set(onlyFirst + onlySecond)
                var common: [Int32] = []
                for event in apart {
                    for parent in parents(of: event) where !apart.contains(parent) { common.append(parent) }
                }
                candidates.append((first, second, Self.frontier(common)))
            }
        }
        guard !candidates.isEmpty else {
            if pastCount(of: frontier) == eventCount { return TextMerge(text: text, overlaps: []) }
            move(to: frontier)
            return TextMerge(text: textOfView(showing: nil), overlaps: [])
        }

        var visible: [[Bool]] = []
        for head in heads {
            move(to: [head])
            visible.append(visibleItems())
        }
        var overlaps: [(start: Int, end: Int, overlap: TextOverlap)] = []
        for candidate in candidates {
            move(to: candidate.common)
            let inCommon = visibleItems()
            overlaps += overlappingStretches(
                of: candidate.first, candidate.second, inCommon: inCommon, visible: visible)
        }
        overlaps.sort {
            ($0.start, $0.overlap.versions[0], $0.overlap.versions[1])
                < ($1.start, $1.overlap.versions[0], $1.overlap.versions[1])
        }
        // Each entry of an overlapping stretch shows the first version's text there.
        var shown: [Int: [Bool]] = [:]
        for (start, end, overlap) in overlaps {
            for ordinal in start..<end where shown[ordinal] == nil { shown[ordinal] = visible[overlap.versions[0]] }
        }
        move(to: frontier)
        return TextMerge(text: textOfView(showing: shown), overlaps: overlaps.map(\.overlap))
    }

    /// How many events are in the past of `frontier`, themselves included.
    private func pastCount(of frontier: [Int32]) -> Int {
        var seen = [Bool](repeating: false, count: eventCount)
        var pending = frontier
        var count = 0
        while let event = pending.popLast() {
            guard !seen[Int(event)] else { continue }
            seen[Int(event)] = true
            count += 1
            pending += parents(of: event)
        }
        return count
    }

    /// Which items the prepare view shows, by id.
    private func visibleItems() -> [Bool] {
        var result = [Bool](repeating: false, count: scalars.count)
        for block in blocks where block.visible > 0 {
            for entry in block.entries where entry >= 0 && prepare[Int(entry)] == 1 { result[Int(entry)] = true }
        }
        return result
    }

    /// The text of the prepare view, except at the entries (by ordinal in the list) of `shown`, which show the
    /// items visible in the version given there.
    private func textOfView(showing shown: [Int: [Bool]]?) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(visibleCount)
        var ordinal = 0
        for block in blocks {
            for entry in block.entries {
                defer { ordinal += 1 }
                if entry < 0 {
                    let run = Int(-1 - entry)
                    let start = Int(runStart[run])
                    for scalar in base[start..<(start + Int(runCount[run]))] { Self.appendUTF8(scalar, to: &bytes) }
                } else if shown?[ordinal].map({ $0[Int(entry)] }) ?? (prepare[Int(entry)] == 1) {
                    Self.appendUTF8(scalars[Int(entry)], to: &bytes)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The stretches where versions `first` and `second` overlap, with their entries' ordinals in the list.
    /// `inCommon` tells the items of their common text; `visible`, the items each version shows.
    ///
    /// Stretches lie between scalars of the common text that both versions kept (anchors). A stretch overlaps when
    /// both versions deleted one of its common scalars, unless both made the same pure deletion there: every common
    /// scalar of the stretch deleted by both, nothing typed there by either.
    private func overlappingStretches(
        of first: Int, _ second: Int, inCommon: [Bool], visible: [[Bool]]
    ) -> [(start: Int, end: Int, overlap: TextOverlap)] {
        struct Stretch {
            var start: Int
            var from = TextOverlap.Position(line: 0, column: 0)
            var to = TextOverlap.Position(line: 0, column: 0)
            var base = String.UnicodeScalarView()
            var texts: [String.UnicodeScalarView]
            var deletedByBoth = false
            var sameDeletion = true
        }
        var result: [(start: Int, end: Int, overlap: TextOverlap)] = []
        var position = TextOverlap.Position(line: 1, column: 1)
        var stretch: Stretch?
        var ordinal = 0
        func close(at end: Int) {
            if let found = stretch, found.deletedByBoth, !found.sameDeletion {
                let overlap = TextOverlap(
                    versions: [first, second], start: found.from, end: found.to, base: String(found.base),
                    texts: found.texts.map { String($0) })
                result.append((found.start, end, overlap))
            }
            stretch = nil
        }
        func advance(over scalar: Unicode.Scalar) {
            if scalar == "\n" {
                position.line += 1
                position.column = 1
            } else {
                position.column += 1
            }
        }
        for block in blocks {
            for entry in block.entries {
                defer { ordinal += 1 }
                guard entry >= 0 else {
                    // A run of the base: every version holds it.
                    close(at: ordinal)
                    let run = Int(-1 - entry)
                    let start = Int(runStart[run])
                    for scalar in base[start..<(start + Int(runCount[run]))] { advance(over: scalar) }
                    continue
                }
                let item = Int(entry)
                let common = inCommon[item]
                let keptByFirst = visible[first][item]
                let keptBySecond = visible[second][item]
                if common, keptByFirst, keptBySecond {
                    close(at: ordinal)
                    advance(over: scalars[item])
                    continue
                }
                if stretch == nil {
                    stretch = Stretch(
                        start: ordinal, texts: Array(repeating: String.UnicodeScalarView(), count: visible.count))
                }
                for version in visible.indices where visible[version][item] {
                    stretch!.texts[version].append(scalars[item])
                }
                if common {
                    if stretch!.base.isEmpty { stretch!.from = position }
                    stretch!.to = position
                    stretch!.base.append(scalars[item])
                    if keptByFirst || keptBySecond {
                        stretch!.sameDeletion = false
                    } else {
                        stretch!.deletedByBoth = true
                    }
                    advance(over: scalars[item])
                } else if keptByFirst || keptBySecond {
                    stretch!.sameDeletion = false
                }
            }
        }
        close(at: ordinal)
        return result
    }
}
