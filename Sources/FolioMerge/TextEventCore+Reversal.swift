extension TextEventCore {
    /// The edits that take the merged text (every event applied) to the text it would be if `reversed` (events)
    /// had not done what they did: the scalars they typed are deleted, and the scalars that they deleted and no
    /// other event did are typed again at their place. Positions are those of the text as the edits before apply.
    ///
    /// - Complexity: O(*n* + *e* + *d*) for *n* items, *e* entries of the list and *d* deletes recorded.
    func reversal(of reversed: [Int32]) -> [TextEdit] {
        var isReversed = [Bool](repeating: false, count: eventCount)
        for event in reversed { isReversed[Int(event)] = true }
        var deletedByOthers = [Bool](repeating: false, count: scalars.count)
        for event in 0..<eventCount where !isReversed[event] {
            for target in deleteTargets[deletes[event]] { deletedByOthers[Int(target)] = true }
        }
        var edits: [TextEdit] = []
        var position = 0
        for block in blocks {
            for entry in block.entries {
                guard entry >= 0 else {
                    // A stretch of the base no event touched: in every version, reversed or not.
                    position += Int(runCount[Int(-1 - entry)])
                    continue
                }
                let item = Int(entry)
                let shown = !deleted[item]
                let typer = itemEvent[item]
                let kept = (typer < 0 || !isReversed[Int(typer)]) && !deletedByOthers[item]
                if shown, !kept {
                    if case .delete(let at, let count)? = edits.last, at == position {
                        edits[edits.count - 1] = .delete(at: at, count: count + 1)
                    } else {
                        edits.append(.delete(at: position, count: 1))
                    }
                } else if !shown, kept {
                    if case .insert(let at, let typed)? = edits.last, at + typed.count == position {
                        edits[edits.count - 1] = .insert(at: at, scalars: typed + [scalars[item]])
                    } else {
                        edits.append(.insert(at: position, scalars: [scalars[item]]))
                    }
                    position += 1
                } else if shown {
                    position += 1
                }
            }
        }
        return edits
    }

    /// Whether an event outside `events` deleted a scalar that one of `typers` typed.
    ///
    /// - Complexity: O(*e* + *d*) for *e* events and *d* deletes recorded.
    func othersDeleted(scalarsTypedBy typers: [Int32], apartFrom events: [Int32]) -> Bool {
        var isTyper = [Bool](repeating: false, count: eventCount)
        for typer in typers { isTyper[Int(typer)] = true }
        var isApart = [Bool](repeating: false, count: eventCount)
        for event in events { isApart[Int(event)] = true }
        for event in 0..<eventCount where !isApart[event] {
            for target in deleteTargets[deletes[event]] {
                let typer = itemEvent[Int(target)]
                if typer >= 0, isTyper[Int(typer)] { return true }
            }
        }
        return false
    }
}
