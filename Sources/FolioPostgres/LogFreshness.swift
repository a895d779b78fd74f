import Synchronization

/// Which libraries' logs may have grown in PostgreSQL since a process's copy of them last read it: what spares a
/// ``PostgresServerLog`` a query before each of its reads, and the process the reading of its own writes.
///
/// Every write that stores changes notifies `folio_changes` once it commits, with the last position it took, the
/// process that wrote (``origin``) and the library (`POSITION:ORIGIN:LIBRARY`; a Folio older than the `2 writes in
/// one call` migration sends the library's name alone). Positions are taken with the log's row locked, so a
/// notification of position P says that every change up to P is committed. While the process listens there, a copy
/// that read PostgreSQL holds everything up to the highest position it read or wrote; it reads PostgreSQL again only
/// when a notification names a higher position of its library, when a notification without a position arrived since
/// its last read, when listening (re)started (notifications sent while nobody listened are lost), or when it knows of
/// a write of another process (its own write found the log grown by others). A notification of the process's own
/// write is not passed on: the copy took those changes before it wrote them. While nothing listens, every read asks
/// PostgreSQL, as without notifications.
///
/// A copy that skips a read may be behind by what other processes committed while their notifications travel (or
/// until a listener that stopped answering is replaced, see ``PostgresServerDatabase/listen(on:checkEvery:_:)``).
/// That is safe: what the process sends its devices is then older, never wrong, and the notification brings the rest;
/// a change of its devices that needs one of those changes waits in the copy until they arrive, and a clash of
/// identities is caught by the write itself, which checks PostgreSQL's rows under the log's lock.
final class LogFreshness: Sendable {
    /// What a copy's read was current with: the start of listening that listened, the library's notifications
    /// without a position, and the highest position notified.
    struct Mark: Sendable {
        var listening: UInt64
        var notices: UInt64
        var notified: Int64

        /// Whether a copy that read with mark `read` and holds the log up to `position` holds everything this mark
        /// tells of.
        func isHeld(by read: Mark?, upTo position: Int64) -> Bool {
            guard let read else { return false }
            return read.listening == listening && read.notices == notices && notified <= position
        }
    }

    /// What a notification of `folio_changes` says.
    struct Notification: Sendable {
        var library: String
        /// The last position the write took, and the process that wrote; `nil` from a Folio that does not send them.
        var position: Int64?
        var origin: String?

        /// Reads a payload: `POSITION:ORIGIN:LIBRARY`, or a library's name alone (which has no colon).
        init(payload: String) {
            let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, let position = Int64(parts[0]) {
                library = String(parts[2])
                self.position = position
                origin = String(parts[1])
            } else {
                library = payload
            }
        }
    }

    /// What was heard of one library with a copy in this process: read without a lock by every read of its copy.
    final class Notices: Sendable {
        /// The notifications without a position.
        fileprivate let unplaced = Atomic<UInt64>(0)
        /// The highest position notified.
        fileprivate let highest = Atomic<Int64>(0)
    }

    /// By library with a copy in this process, what was heard of it.
    private let libraries = Mutex<[String: Notices]>([:])
    /// Whether notifications are delivered here at all (a server watches; a command that only exports does not).
    private let watching = Atomic<Bool>(false)
    private let listening: PostgresServerDatabase.ListeningStart
    /// This process's mark on the notifications of its writes.
    let origin: String

    init(database: PostgresServerDatabase, channel: String, origin: String) {
        listening = database.listeningStart(of: channel)
        self.origin = origin
    }

    /// Records that listening on the channel (re)started (which the database counts itself, the moment it starts: a
    /// read between the start and this call reads again).
    func listeningStarted() {
        watching.store(true, ordering: .releasing)
    }

    /// Records a notification; returns the library it names, or `nil` for a write of this process (its copy took
    /// those changes before writing them).
    func heard(_ payload: String) -> String? {
        let notification = Notification(payload: payload)
        watching.store(true, ordering: .releasing)
        // Only libraries with a copy here are counted: the others read PostgreSQL when they open.
        if let notices = libraries.withLock({ $0[notification.library] }) {
            if let position = notification.position {
                notices.highest.max(position, ordering: .releasing)
            } else {
                notices.unplaced.wrappingAdd(1, ordering: .releasing)
            }
        }
        return notification.origin == origin ? nil : notification.library
    }

    /// Makes reads of `library` start counting its notifications; the copy's reads pass what this returns to
    /// ``mark(of:)``.
    func watch(_ library: String) -> Notices {
        libraries.withLock { libraries in
            if let notices = libraries[library] { return notices }
            let notices = Notices()
            libraries[library] = notices
            return notices
        }
    }

    /// The mark a read of the library whose notices are `notices` that starts now is current with, or `nil` when
    /// the read must ask PostgreSQL whatever it read before (nothing listens now).
    func mark(of notices: Notices) -> Mark? {
        guard let listening = listening.now, watching.load(ordering: .acquiring) else { return nil }
        return Mark(
            listening: listening, notices: notices.unplaced.load(ordering: .acquiring),
            notified: notices.highest.load(ordering: .acquiring))
    }
}
