/// Who may use a store's SQLite file while a ``ChangeLogStore`` has it open.
public enum StoreAccess: Sendable, Hashable {
    /// Other connections, in this process or others, may read and write the file at the same time: the store keeps
    /// a pool of reader connections and one writer (WAL mode, with its shared-memory index). The default.
    case shared
    /// The store is the file's only user: one connection that holds SQLite's exclusive lock from its first
    /// transaction until it is closed (or deallocated). Transactions take no file locks and the WAL index lives in
    /// memory, so each costs less; reads wait for writes. Being the file's only user, the store also keeps every
    /// document's frontier (vector and heads) and every device's name in memory, so that vectors, summaries and
    /// heads cost no query (see `verify()`, which compares that memory with the file). Another connection to the
    /// file fails with a `database` error ("database is locked") until the store is gone. Meant for a process that
    /// owns its files outright, such as the scenario simulator's devices.
    case exclusive
}
