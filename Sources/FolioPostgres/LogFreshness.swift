import Synchronization

/// Which libraries' logs may have grown in PostgreSQL since a process's copy of them last read it: what spares a
/// ``PostgresServerLog`` a query before each of its reads.
///
/// Every transaction that stores changes notifies `folio_changes` with its library's name once it commits. While
/// the process listens there, a copy that read PostgreSQL and has heard of no notification of its library since
/// holds everything stored up to the read, but what committed after it; and that notification is on its way. So a copy
/// reads PostgreSQL again only when a notification of its library arrived since its last read, when listening
/// (re)started (notifications sent while nobody listened are lost), or when it knows of a write of another process
/// (its own write found the log grown by others). While nothing listens, every read asks PostgreSQL, as without
/// notifications.
///
/// A copy that skips a read may be behind by what other processes committed while their notifications travel (or
/// until a listener that stopped answering is replaced, see ``PostgresServerDatabase/listen(on:checkEvery:_:)``).
/// That is safe: what the process sends its devices is then older, never wrong, and the notification brings the rest;
/// a change of its devices that needs one of those changes waits in the copy until they arrive, and a clash of
/// identities is caught by the write itself, which checks PostgreSQL's rows under the log's lock.
final class LogFreshness: Sendable {
    /// What a copy's read was current with: the start of listening that listened, and the library's latest
    /// notification.
    struct Mark: Equatable, Sendable {
        var listening: UInt64
        var notices: UInt64
    }

    private struct State {
        /// Whether notifications are delivered here at all (a server watches; a command that only exports does not).
        var watching = false
        /// By library with a copy in this process, the notifications heard of it.
        var notices: [String: UInt64] = [:]
    }

    private let state = Mutex(State())
    private let database: PostgresServerDatabase
    private let channel: String

    init(database: PostgresServerDatabase, channel: String) {
        self.database = database
        self.channel = channel
    }

    /// Records what the listener on the channel delivered: a library's name, or `nil` when listening (re)started
    /// (which the database counts itself, the moment it starts: a read between the start and this call reads again).
    func heard(_ payload: String?) {
        state.withLock { state in
            state.watching = true
            // Only libraries with a copy here are counted: the others read PostgreSQL when they open.
            if let payload, let count = state.notices[payload] { state.notices[payload] = count &+ 1 }
        }
    }

    /// Makes reads of `library` start counting its notifications.
    func watch(_ library: String) {
        state.withLock { state in
            if state.notices[library] == nil { state.notices[library] = 0 }
        }
    }

    /// The mark a read of `library` that starts now is current with, or `nil` when the read must ask PostgreSQL
    /// whatever it read before (nothing listens now).
    func mark(of library: String) -> Mark? {
        guard let listening = database.listening(on: channel) else { return nil }
        return state.withLock { state in
            guard state.watching, let notices = state.notices[library] else { return nil }
            return Mark(listening: listening, notices: notices)
        }
    }
}
