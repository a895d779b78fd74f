/// Bounds on the numbers a change carries, so that a hostile peer cannot push a device's counters to where the
/// next local change would overflow them.
///
/// Every device checks them on every change it decodes or ingests, and ``CausalGraph/firstInconsistency()``
/// (what `verify` runs) checks them too, so a history one device accepts is one every device accepts.
public enum ChangeLimits {
    /// The largest sequence number, vector entry or lamport timestamp a change may carry: 2^53 − 1, which JSON
    /// numbers (reports) hold exactly, and far beyond what any device counts to.
    public static let counter: UInt64 = (1 << 53) - 1

    /// How far a change's lamport timestamp may run ahead of its highest parent's (of 0 for a change with no
    /// parent): 2^32.
    ///
    /// Without it, one change with a lamport timestamp near ``counter`` would leave every device that builds on it
    /// no room for another; with it, pushing timestamps to the end takes about two million changes in a row. A local
    /// change takes the highest timestamp its device has seen plus one, capped at its parents' plus this step.
    public static let lamportStep: UInt64 = 1 << 32

    /// The most parents a change may name: 4,096. A change's parents are heads of distinct devices, so only a
    /// document with more devices editing at once, none seeing the others, could need more; checking a change costs
    /// its parents times their vectors' devices.
    public static let parents = 4_096

    /// The largest lamport timestamp allowed for a change whose highest parent has `parentLamport` (0: no parent).
    public static func maximumLamport(afterParentsAt parentLamport: UInt64) -> UInt64 {
        min(counter, parentLamport + lamportStep)
    }
}
