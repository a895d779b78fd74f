/// The text of one version of a ``TextEventCore``, read from the list without moving the prepare view.
extension TextEventCore {
    /// The text of the version at `heads` (events): the scalars an event of its past typed, and the base's, that
    /// no event of its past deleted.
    ///
    /// - Complexity: O(*n* + *e* + *d*) for *n* scalars and entries of the list, *e* events and *d* scalars the
    ///   version's past deleted; the prepare view is not moved, so the graph's next edit finds it where it was.
    func versionText(_ heads: [Int32]) -> String {
        var inPast = [Bool](repeating: false, count: eventCount)
        var pending = heads
        var deletedInPast = [Bool](repeating: false, count: scalars.count)
        while let event = pending.popLast() {
            guard !inPast[Int(event)] else { continue }
            inPast[Int(event)] = true
            for target in deleteTargets[deletes[Int(event)]] { deletedInPast[Int(target)] = true }
            pending += parents(of: event)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.count + scalars.count)
        for block in blocks {
            for entry in block.entries {
                if entry < 0 {
                    let run = Int(-1 - entry)
                    let start = Int(runStart[run])
                    for scalar in base[start..<(start + Int(runCount[run]))] { Self.appendUTF8(scalar, to: &bytes) }
                    continue
                }
                let item = Int(entry)
                let typer = itemEvent[item]
                if (typer == Self.none || inPast[Int(typer)]) && !deletedInPast[item] {
                    Self.appendUTF8(scalars[item], to: &bytes)
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
