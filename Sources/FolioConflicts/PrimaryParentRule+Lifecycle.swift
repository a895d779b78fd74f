import FolioCore

extension PrimaryParentRule {
    /// The heads a catalog change (rename, move, delete, restore) by `device` is made on: the version every device
    /// shows (``ContentHeads/winner``) and the heads that carry no version beside it, so the change carries its
    /// causal context without joining competing versions (which would settle a conflict silently, and differently
    /// from what the document showed); or, when `device`'s own latest change is a competing version, that one alone
    /// (a device's changes form one line, so the change would join it anyway).
    ///
    /// - Parameters:
    ///   - heads: the document's heads, split by ``contentHeads(among:)``.
    ///   - device: the device making the change.
    ///   - ownCount: how many changes of `device` the log holds.
    ///   - latestOwn: `device`'s latest change, if the log as read holds it.
    /// - Returns: the parents, never empty when `heads` has a version.
    /// - Throws: `Failure`, what `lookup` throws.
    public func lifecycleParents(
        of heads: ContentHeads, by device: DeviceID, ownCount: UInt64, latestOwn: Change?
    ) throws(Failure) -> [ChangeHash] {
        guard let winner = heads.winner else { return [] }
        if ownCount > winner.vector[device] { return [latestOwn?.hash ?? winner.hash] }
        // Heads that only renamed or moved contents another head holds are joined too: they carry no version, and a
        // later rename must descend from the renames it has seen. Only those the rule passes over beside the
        // winner: a head absorbed by a version this change does not join would otherwise decide its contents.
        var joined = [winner.hash]
        for head in heads.absorbed where try !carriesContents(head, beside: [winner]) { joined.append(head.hash) }
        return joined
    }
}
