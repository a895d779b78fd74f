import FolioCore
import FolioSync

/// What happens to a library while it syncs with a server (``LibrarySync/events``), in order.
public enum LibraryEvent: Hashable, Sendable {
    /// The connection's state changed.
    case connection(ConnectionState)
    /// A session that catches the library and the server up started (at every connection).
    case syncStarted
    /// That session finished: the library holds what the server held, and the server what the library held.
    case syncFinished(SyncReport)
    /// The connection ended before that session finished; a new connection follows.
    case syncFailed(reason: String)
    /// A document another device created arrived.
    case documentAdded(DocumentID, name: String)
    /// A document was deleted on another device.
    case documentRemoved(DocumentID)
    /// A document was renamed on another device.
    case documentRenamed(DocumentID, from: String, to: String)
    /// Changes from other devices entered a document's log (its open `Document`, if any, shows them already).
    case documentChanged(DocumentID)
    /// A document now has competing versions: versions that need a decision (a person's, or a policy that picks).
    /// Versions of a text that merge character by character without overlapping, under `merge`, merge silently
    /// and are no conflict (told for the text and pages models Folio ships, and for any model of a document the app
    /// has open).
    case conflictAppeared(DocumentID)
    /// A document's competing versions were settled (by a policy, a person, or another device's resolution).
    case conflictResolved(DocumentID)
    /// The server no longer grants this library to the token: the token, its user or the share that granted the
    /// library was revoked (`code` 4401), or the token grants other libraries (4403); not when the token merely
    /// expired (4402, ``ConnectionState/refused(code:reason:)`` alone: a fresh token is the app's to get). Follows
    /// ``ConnectionState/refused(code:reason:)``; the sync stops. Everything the library holds stays on this device:
    /// what to do with it is the app's choice, keeping it (with a new token, syncing can start again) or removing it
    /// once the library is let go of (`DocumentLibrary.removeLocalCopies(at:fileSystem:)`).
    case accessRevoked(code: UInt16, reason: String)
    /// The token grants single documents of the library, not all of it (a share of a document, or an app token's
    /// `documents` claim): only these sync on this connection, each read-only or writable as the scope says; the
    /// library's other documents stay on this device, neither sent nor updated. At every such connection, after
    /// ``ConnectionState/connected``.
    case scope(SyncScope)
    /// Documents the library holds that the previous connection synced and this one's token no longer grants (a
    /// share ended, a new token names fewer): nothing of them is sent or received any more. What the library holds
    /// of them stays on this device until the app removes it (`DocumentLibrary.removeLocalCopy(of:)`, once the
    /// document is closed). Follows the new connection's ``ConnectionState/connected``.
    case documentsRevoked([DocumentID])
}

/// The state of a library's connection to its server.
public enum ConnectionState: Hashable, Sendable {
    /// Connecting; `attempt` counts from 1 since the last connection that lasted.
    case connecting(attempt: Int)
    /// Connected.
    case connected
    /// Not connected; the next attempt starts after `retryIn`.
    case waiting(reason: String, retryIn: Duration)
    /// Connected with a token that may only read (a token with the `read` role, the server's own or one the app's
    /// backend signs): the library receives the others' changes and presence, and sends no change; what this device
    /// commits stays on it. Follows ``connected`` on such a connection.
    case readOnly
    /// The server refused the token: it is unknown or revoked (`code` 4401), expired (4402), grants another library
    /// (4403), or may only read and was used to write (4405), or grants single documents and was used for another (4406). The sync does not try again; ``stopped`` follows. Start a new
    /// sync with a valid token.
    case refused(code: UInt16, reason: String)
    /// Stopped (``LibrarySync/stop()``, or after ``refused(code:reason:)``).
    case stopped
}
