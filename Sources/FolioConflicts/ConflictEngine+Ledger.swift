import FolioCore

extension ConflictEngine {
    /// The loss ledger: every resolution among `resolutions` and the versions each discarded, in the order given
    /// (the log's causal order, oldest first). Discarded versions stay in history, so each can be brought back.
    ///
    /// A resolution is made on the versions it settles: a discarded hash that is not one of its parents (forged or
    /// corrupt) is left out, as is one the history does not hold, so every device lists the same entries.
    ///
    /// - Parameters:
    ///   - resolutions: the document's resolution changes, oldest first; other changes are passed over.
    ///   - history: the document's history.
    ///   - devices: the known devices, with their names and persons.
    /// - Throws: `History.Failure`, what reading `history` throws.
    public static func lossLedger<History: ConflictHistory<Model>>(
        of resolutions: [Change], in history: History, devices: [DeviceID: Device]
    ) throws(History.Failure) -> [LossRecord<Model>] {
        var ledger: [LossRecord<Model>] = []
        for change in resolutions {
            guard case .resolution(let resolution) = change.kind else { continue }
            var discarded: [DiscardedVersion<Model>] = []
            for hash in resolution.discarded where change.parents.contains(hash) {
                guard let head = try history.change(hash) else { continue }
                discarded.append(
                    DiscardedVersion(
                        head: head, device: device(head.id.device, devices), contents: try history.state(at: head)))
            }
            ledger.append(
                LossRecord(
                    resolution: change, resolvedBy: device(change.id.device, devices),
                    strategy: resolution.strategy, chosen: resolution.chosen.filter(change.parents.contains),
                    discarded: discarded))
        }
        return ledger
    }

    static func device(_ id: DeviceID, _ devices: [DeviceID: Device]) -> Device {
        devices[id] ?? Device(id: id, name: "")
    }
}
