import FolioCore

/// The order in which the heads of a document win: the higher lamport timestamp, then the higher device.
///
/// Every device orders the same heads the same way, so every device shows the same version of a conflict, picks the
/// same primary parent and lists versions in the same order; this type is the one place that order is written.
public struct HeadOrder: Comparable, Hashable, Sendable {
    /// The change's lamport timestamp.
    public var lamport: UInt64
    /// The change's device.
    public var device: DeviceID

    /// The position of `change` in the order.
    public init(_ change: Change) {
        lamport = change.lamport
        device = change.id.device
    }

    /// Whether `lhs` loses to `rhs`: a lower lamport, or the same lamport and a lower device.
    public static func < (lhs: HeadOrder, rhs: HeadOrder) -> Bool {
        (lhs.lamport, lhs.device) < (rhs.lamport, rhs.device)
    }
}

extension Change {
    /// The change's position in the order heads win by (see ``HeadOrder``).
    public var headOrder: HeadOrder { HeadOrder(self) }
}

extension Sequence where Element == Change {
    /// The change that wins by ``HeadOrder``; `nil` for no changes.
    public func winningHead() -> Change? {
        self.max { $0.headOrder < $1.headOrder }
    }

    /// The changes from the one that loses to the one that wins, by ``HeadOrder``.
    public func sortedByHeadOrder() -> [Change] {
        sorted { $0.headOrder < $1.headOrder }
    }
}
