/// The identity of one change within a document: the device that made it and its sequence number there.
///
/// Per document and device, `seq` runs 1, 2, 3… with no gaps, so a ``VersionVector`` entry `device: n` names
/// exactly the changes `(device, 1)` … `(device, n)`.
public struct ChangeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The device that made the change.
    public var device: DeviceID
    /// The change's position in that device's sequence, from 1.
    public var seq: UInt64

    /// Creates an identity.
    ///
    /// - Precondition: `seq >= 1`.
    public init(device: DeviceID, seq: UInt64) {
        precondition(seq >= 1, "change sequence numbers start at 1")
        self.device = device
        self.seq = seq
    }

    /// Orders by device, then sequence number.
    public static func < (lhs: ChangeID, rhs: ChangeID) -> Bool {
        (lhs.device, lhs.seq) < (rhs.device, rhs.seq)
    }

    /// `device#seq`, for messages.
    public var description: String { "\(device)#\(seq)" }
}
