import FolioCore

extension ConflictEngine {
    /// The resolution to record before an author's next change, if that change would otherwise make a competing
    /// version the document has shown disappear without a trace; decided over the versions last observed.
    ///
    /// A change is always made on its author's latest change too (a device's changes form one line). When that
    /// latest change is a head whose version lost (the document shows another one) and no other head holds the same
    /// contents, a change made on the version shown would absorb it: no conflict left, no resolution, nothing in the
    /// loss ledger. Editing the version shown is the author's implicit choice, so it is recorded as one: a
    /// `userChoice` resolution that keeps the version shown and discards the author's competing version (and only
    /// it: versions of other devices keep competing). Its parents are the version shown and the discarded head, so
    /// it syncs, and every device lists the discarded version in the loss ledger.
    ///
    /// - Parameters:
    ///   - shown: the head the document shows, which the change is made on.
    ///   - joined: the other heads the change is made on (those that share the shown state, and absorbed heads the
    ///     change can join).
    ///   - absorbed: the heads the writer knew to carry no version of their own when it chose `joined`.
    ///   - latest: the author's latest change, when it is one the document has seen and not in `shown`'s past.
    /// - Returns: the resolution, or `nil` when nothing would be lost.
    public func implicitResolution(
        keeping shown: ChangeHash, joining joined: [ChangeHash], absorbed: [ChangeHash], authorsLatest latest: Change
    ) -> Resolution? {
        let choice = Resolution(strategy: .userChoice, chosen: [shown], discarded: [latest.hash])
        // The author's latest change only moved or renamed contents another head includes, but that head is not
        // joined: the content rule alone would follow the latest change's contents, not the version shown.
        if absorbed.contains(latest.hash) && !joined.contains(latest.hash) { return choice }
        guard !([shown] + joined).contains(latest.hash),
            let competing = versions.first(where: { $0.contains(latest.hash) }),
            // Another head with the same contents (the shown one, say) keeps the version: nothing would be lost.
            competing.heads.count == 1
        else { return nil }
        return choice
    }
}
