import FolioCore

/// Picks the signed heads each part of a reply carries (a `changes` message, a run, a folder file), part after part
/// in the order the receiver reads them.
///
/// A receiver takes a change in only when a head of its device, whose own change it takes in too, reaches it; the
/// rest waits, with the heads that came with it, until a later part's changes need it and its heads can enter. So
/// the heads of one part should vouch for one another: a head whose change needs another device's change beyond
/// what the heads for that device reach waits, and with it every change of its device in the part. In a history
/// several devices wrote together, the latest head of each device in a part nearly always needs such a change, and
/// sending those, every part would wait for the last one.
///
/// So the picker follows what the receiver will have taken in (``reached``) and which heads it holds waiting with
/// their changes (``waiting``), and per part takes for each device the latest candidate that needs of the others
/// only what the candidates taken for them reach: for the sender's own identities every change of theirs in the
/// part (it signs the one taken), for other devices the kept heads among the part's changes, and for any device the
/// head the receiver holds waiting when a change of the part needs its change (which brings it back). The store
/// keeps heads so that such sets exist (one per device and span of the history, see `ChangeLogStore.headSpan`).
///
/// A device's changes above the head taken for it wait for a later part's head of that device. In the part holding
/// a device's last change of the reply there is no later part: it carries the head of that last change (or the kept
/// head nearest it), taken or not, which the receiver holds with its change until a later part lets it in. A device
/// for which no candidate holds gets the head that reaches its changes soonest (``SignedHead/reaching(_:_:among:)``).
struct PartHeads {
    /// The sender's kept heads of the document, by device, lowest first.
    private let kept: [DeviceID: [SignedHead]]
    /// Per device, its last change's seq in the whole reply.
    private let lastInReply: [DeviceID: UInt64]
    /// Per device, the highest seq the heads taken so far reach: what the receiver has taken in once it has read
    /// the parts so far. A device's changes below the first of them the reply carries are the receiver's already.
    private var reached: [DeviceID: UInt64] = [:]
    /// Per device, a head sent in an earlier part that its parts did not let in: the receiver holds it, with its
    /// change, above ``reached``.
    private var waiting: [DeviceID: (head: SignedHead, change: Change)] = [:]

    /// - Parameters:
    ///   - kept: the sender's kept heads of the document.
    ///   - reply: every change of the reply, in the order its parts carry them.
    init(kept: some Sequence<SignedHead>, reply: some Sequence<Change>) {
        self.kept = Dictionary(grouping: kept, by: \.change.device).mapValues {
            $0.sorted { $0.change.seq < $1.change.seq }
        }
        var lastInReply: [DeviceID: UInt64] = [:]
        for change in reply { lastInReply[change.id.device] = max(lastInReply[change.id.device] ?? 0, change.id.seq) }
        self.lastInReply = lastInReply
    }

    /// One head a part may carry, or that the receiver holds waiting.
    private struct Candidate {
        var change: Change
        /// The kept or waiting head; `nil` for a change of the sender's own identities, signed once taken.
        var head: SignedHead?
        /// Whether the head came in an earlier part and the receiver holds it.
        var isWaiting = false
    }

    /// The heads of the next part, `changes` (in causal order), one per device with changes in it, in device order.
    ///
    /// - Parameters:
    ///   - changes: the part's changes, the next of the reply.
    ///   - sign: signs a head for a change of the sender's own identities; `nil` for others' changes. It signs
    ///     every change of a device it signs one of (the picker takes any of them).
    /// - Complexity: O(changes × devices per change + kept heads in the part), then per round of the fixed point
    ///   O(candidates × devices per change); each round but the last drops at least one candidate.
    mutating func next(_ changes: some Sequence<Change>, sign: (Change) -> SignedHead?) -> [SignedHead] {
        // The part's changes by device, in seq order (a device's changes are in its order in a causal order).
        var byDevice: [DeviceID: [Change]] = [:]
        var byID: [ChangeID: Change] = [:]
        for change in changes {
            byDevice[change.id.device, default: []].append(change)
            byID[change.id] = change
        }
        func first(_ device: DeviceID) -> UInt64 { byDevice[device]!.first!.id.seq }
        func last(_ device: DeviceID) -> Change { byDevice[device]!.last! }
        for device in byDevice.keys where reached[device] == nil { reached[device] = first(device) - 1 }
        var signedLast: [DeviceID: SignedHead] = [:]
        var candidates: [DeviceID: [Candidate]] = [:]
        for (device, own) in byDevice {
            let lastChange = own.last!
            let isLastPart = lastChange.id.seq >= lastInReply[device] ?? 0
            var list: [Candidate]
            if let signed = sign(lastChange) {
                signedLast[device] = signed
                list = (isLastPart ? [lastChange] : own.reversed()).map { Candidate(change: $0) }
            } else {
                list = keptHeads(of: device, from: first(device), to: lastChange.id.seq).reversed().compactMap {
                    head in byID[head.change].map { Candidate(change: $0, head: head) }
                }
                if isLastPart { list = Array(list.prefix(1)) }
            }
            candidates[device] = list
        }
        // Whether a change taken in the part brings a held head back is the fixed point's to say.
        for (device, held) in waiting {
            candidates[device, default: []].append(Candidate(change: held.change, head: held.head, isWaiting: true))
        }

        let pick = takeHeadsThatVouchForOneAnother(candidates)
        var heads: [SignedHead] = []
        for device in byDevice.keys.sorted() {
            var sent: (head: SignedHead, change: Change?)?
            if let index = pick[device], !candidates[device]![index].isWaiting {
                let candidate = candidates[device]![index]
                if let head = candidate.head {
                    sent = (head, candidate.change)
                } else if let signed = signedLast[device], signed.change == candidate.change.id {
                    sent = (signed, candidate.change)
                } else if let signed = sign(candidate.change) {
                    sent = (signed, candidate.change)
                }
            }
            if sent == nil {
                // Nothing of the part taken for it: the head that reaches its changes soonest, which the receiver
                // holds with its change if that is in the part.
                if let signed = signedLast[device] {
                    sent = (signed, last(device))
                } else if let head = SignedHead.reaching(first(device), last(device).id.seq, among: kept[device] ?? [])
                {
                    sent = (head, byID[head.change])
                }
            }
            guard let sent else { continue }
            heads.append(sent.head)
            if let change = sent.change,
                change.id.seq > max(reached[device] ?? 0, waiting[device]?.head.change.seq ?? 0)
            {
                waiting[device] = (sent.head, change)
            }
        }
        for (device, index) in pick {
            reached[device] = max(reached[device] ?? 0, candidates[device]![index].change.id.seq)
        }
        for (device, held) in waiting where held.head.change.seq <= reached[device] ?? 0 {
            waiting[device] = nil
        }
        return heads
    }

    /// Per device, the index of the latest candidate that needs of every other device only what the candidates
    /// taken for it reach (with what the receiver has taken in), or none: the largest such set.
    private func takeHeadsThatVouchForOneAnother(_ candidates: [DeviceID: [Candidate]]) -> [DeviceID: Int] {
        var pick: [DeviceID: Int] = [:]
        for (device, list) in candidates where !list.isEmpty { pick[device] = 0 }
        // A device the reply has carried no change of yet: the receiver has what the part's changes need of it.
        func reach(_ device: DeviceID) -> UInt64 {
            guard let before = reached[device] else { return .max }
            return max(before, pick[device].map { candidates[device]![$0].change.id.seq } ?? 0)
        }
        var changed = true
        while changed {
            changed = false
            for device in candidates.keys.sorted() {
                while let index = pick[device] {
                    let candidate = candidates[device]![index]
                    let change = candidate.change
                    var holds = change.vector.entries.allSatisfy { $0.device == device || $0.seq <= reach($0.device) }
                    // A head the receiver holds comes back only with a change that needs its change: one of another
                    // device taken in this part (what else the part brings may wait, and be examined no further).
                    if holds, candidate.isWaiting {
                        holds = pick.contains { other, otherIndex in
                            let taken = candidates[other]![otherIndex]
                            return other != device && !taken.isWaiting
                                && taken.change.vector[device] >= change.id.seq
                        }
                    }
                    if holds { break }
                    pick[device] = index + 1 < candidates[device]!.count ? index + 1 : nil
                    changed = true
                }
            }
        }
        return pick
    }

    /// The kept heads of `device` from seq `low` to `high`, lowest first.
    private func keptHeads(of device: DeviceID, from low: UInt64, to high: UInt64) -> ArraySlice<SignedHead> {
        guard let heads = kept[device] else { return [] }
        var start = 0
        var end = heads.count
        while start < end {
            let middle = (start + end) / 2
            if heads[middle].change.seq < low { start = middle + 1 } else { end = middle }
        }
        var stop = start
        while stop < heads.count, heads[stop].change.seq <= high { stop += 1 }
        return heads[start..<stop]
    }
}
