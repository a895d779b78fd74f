import FolioCore

/// The signed heads one part of a reply carries (a `changes` message, a folder file), per device with changes in it:
/// signed by `sign` for the device's last change in the part when `sign` can (the sender's own identities),
/// otherwise the kept head that reaches the part's changes of that device soonest
/// (``SignedHead/reaching(_:_:among:)``). So each part is vouched for by itself or by the next one.
///
/// - Parameters:
///   - changes: the part's changes, in causal order.
///   - kept: the sender's kept heads of the document, by device.
///   - sign: signs a head for a change of the sender's own identities; `nil` for others' changes.
/// - Returns: at most one head per device, in device order.
func partHeads(
    for changes: some Sequence<Change>, kept: [DeviceID: [SignedHead]], sign: (Change) -> SignedHead?
) -> [SignedHead] {
    var first: [DeviceID: UInt64] = [:]
    var last: [DeviceID: Change] = [:]
    for change in changes {
        if first[change.id.device] == nil { first[change.id.device] = change.id.seq }
        last[change.id.device] = change
    }
    return last.keys.sorted().compactMap { device in
        sign(last[device]!) ?? SignedHead.reaching(first[device]!, last[device]!.id.seq, among: kept[device] ?? [])
    }
}
