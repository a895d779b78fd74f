import FolioCore

/// Picks the signed heads each part of a reply carries (a `changes` message, a run, a folder file), part after part
/// in the order the receiver reads them.
///
/// A receiver takes a change in only when a head of its device, whose own change it takes in too, reaches it; the
/// rest of the part waits for a later part's heads. So the heads of one part must vouch for one another: a head
/// whose change needs another device's change beyond the head the part carries for that device is itself held, and
/// with it every change of its device in the part. In a history several devices wrote together, the latest head
/// of each device in a part nearly always needs such a change, and every part would wait for the last one. So, per
/// part, the picker takes for each device the latest head that needs of the others' changes only what the heads
/// picked for them (in this part or before) reach: the store keeps heads so that such sets exist (one per device
/// and span of the history, see `ChangeLogStore.headSpan`), and the sender's own changes can each be signed.
///
/// A device with no such head gets the kept head that reaches its changes soonest
/// (``SignedHead/reaching(_:_:among:)``): its changes in the part wait for the part that brings that head.
struct PartHeads {
    private let kept: [DeviceID: [SignedHead]]
    /// Per device, the highest seq the heads picked so far reach: what the receiver has taken in once it has read
    /// the parts so far. A device's changes below the first of them a reply carries are the receiver's already.
    private var reached: [DeviceID: UInt64] = [:]

    /// - Parameter kept: the sender's kept heads of the document.
    init(kept: some Sequence<SignedHead>) {
        self.kept = Dictionary(grouping: kept, by: \.change.device).mapValues {
            $0.sorted { $0.change.seq > $1.change.seq }
        }
    }

    /// The heads of the next part, `changes` (in causal order), at most one per device with changes in it, in
    /// device order.
    ///
    /// - Parameter sign: signs a head for a change of the sender's own identities; `nil` for others' changes.
    /// - Complexity: O(changes + candidate heads × devices per change) per round; each round but the last drops one
    ///   candidate.
    mutating func next(_ changes: some Sequence<Change>, sign: (Change) -> SignedHead?) -> [SignedHead] {
        var first: [DeviceID: UInt64] = [:]
        var last: [DeviceID: Change] = [:]
        var byID: [ChangeID: Change] = [:]
        for change in changes {
            let device = change.id.device
            if first[device] == nil { first[device] = change.id.seq }
            last[device] = change
            byID[change.id] = change
        }
        for (device, seq) in first where reached[device] == nil { reached[device] = seq - 1 }
        let devices = last.keys.sorted()
        // Per device, the candidates, latest first: every change of the part for the sender's own identities (it
        // signs the one picked), the kept heads whose changes are in the part for the others.
        var own: [DeviceID: SignedHead] = [:]
        var candidates: [DeviceID: [Change]] = [:]
        for device in devices {
            let lastChange = last[device]!
            if let signed = sign(lastChange) {
                own[device] = signed
                candidates[device] = byID.values.filter { $0.id.device == device }.sorted { $0.id.seq > $1.id.seq }
            } else {
                candidates[device] = (kept[device] ?? []).compactMap { byID[$0.change] }
            }
        }
        var picked: [DeviceID: Int] = [:]
        for device in devices where !(candidates[device] ?? []).isEmpty { picked[device] = 0 }
        // A device the reply has carried no change of yet: the receiver has what the part's changes need of it.
        func reach(_ device: DeviceID) -> UInt64 {
            guard let before = reached[device] else { return .max }
            return max(before, picked[device].map { candidates[device]![$0].id.seq } ?? 0)
        }
        var changed = true
        while changed {
            changed = false
            for device in devices {
                while let index = picked[device] {
                    let change = candidates[device]![index]
                    let vouched = change.vector.entries.allSatisfy { entry in
                        entry.device == device || entry.seq <= reach(entry.device)
                    }
                    if vouched { break }
                    picked[device] = index + 1 < candidates[device]!.count ? index + 1 : nil
                    changed = true
                }
            }
        }
        var heads: [SignedHead] = []
        for device in devices {
            if let index = picked[device] {
                let change = candidates[device]![index]
                reached[device] = max(reached[device] ?? 0, change.id.seq)
                if let signed = own[device] {
                    heads.append(change.id == signed.change ? signed : sign(change)!)
                } else if let head = kept[device]?.first(where: { $0.change == change.id }) {
                    heads.append(head)
                }
            } else if let signed = own[device] {
                heads.append(signed)
            } else if let head = SignedHead.reaching(
                first[device]!, last[device]!.id.seq, among: kept[device] ?? [])
            {
                heads.append(head)
            }
        }
        return heads
    }
}
