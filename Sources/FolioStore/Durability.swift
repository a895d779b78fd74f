/// How a committed change reaches the disk.
///
/// In every mode a change is acknowledged (the call that made it returns) only after its transaction committed, and
/// a process crash after that cannot lose it. The modes differ on power loss.
public enum Durability: Sendable, Hashable {
    /// The write-ahead log is synced (fsync) at every commit: a committed change survives power loss.
    case full
    /// The write-ahead log is synced at checkpoints only (SQLite's `synchronous = NORMAL` in WAL mode): a process
    /// crash loses nothing; a power loss may lose the last commits, never corrupt the store. The default.
    case normal
    /// Nothing is synced (SQLite's `synchronous = OFF`): a process crash still loses nothing, as the operating
    /// system writes out what was committed; a power loss or a system crash may lose commits or damage the store.
    /// For scratch stores and simulations of process crashes.
    case off

    var synchronousPragma: String {
        switch self {
        case .full: "FULL"
        case .normal: "NORMAL"
        case .off: "OFF"
        }
    }
}
