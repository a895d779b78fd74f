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
        return edits(
            from: { !deleted[$0] },
            to: { item in
                let typer = itemEvent[item]
                return (typer < 0 || !isReversed[Int(typer)]) && !deletedByOthers[item]
            })
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
