/// Whether a document's versions compete, as the conflict engine last saw its heads.
public enum ConflictState: Hashable, Sendable, CustomStringConvertible {
    /// One version: nothing to settle.
    case settled
    /// This many versions compete (two or more).
    case inConflict(versions: Int)

    /// `settled`, or `inConflict(N)`.
    public var description: String {
        switch self {
        case .settled: "settled"
        case .inConflict(let versions): "inConflict(\(versions))"
        }
    }
}
