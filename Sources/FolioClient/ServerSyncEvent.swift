import FolioCore
import FolioSync

/// What a live connection to a server does, in order.
public enum ServerSyncEvent: Sendable {
    /// Connecting (the attempt's number, from 1; the first after a success is 1 again).
    case connecting(attempt: Int)
    /// Connected; a session that catches both sides up starts.
    case connected
    /// The session that started at connection finished: both sides hold what the other had.
    case caughtUp(SyncReport)
    /// Changes from the server entered these documents' logs (in identity order).
    case received([DocumentID])
    /// The server stored this device's changes of `document` up to `vector`.
    case acknowledged(document: DocumentID, vector: VersionVector)
    /// Another device of the library shows itself in `document`: the bytes of a `PresenceState`, or, empty, that it
    /// shows nothing there any more. Every device's presence ends when the connection does (``disconnected(reason:retryIn:)``).
    case presence(document: DocumentID, device: DeviceID, state: [UInt8])
    /// The connection ended or could not be made; another attempt follows after `retryIn` unless stopped.
    case disconnected(reason: String, retryIn: Duration)
    /// The server said the token may only read (a `read` role): this device receives the library's changes and
    /// presence, and sends no change and no blob; what it commits stays on it. Once per connection, before
    /// ``caughtUp(_:)``.
    case readOnly
    /// What the token lets this connection sync, as the server said in its first frame (a server that knows scopes
    /// says it to every client that reads it): the whole library, or single documents, each to read or to write.
    /// Documents outside it are neither sent nor taken on this connection. Once per connection, before
    /// ``caughtUp(_:)`` (and before ``readOnly`` when the scope writes nothing).
    case scope(SyncScope)
    /// The server refused the token (`code` 4401: unknown or revoked; 4402: expired; 4403: of another library; 4405: a token
    /// that may only read was used to write, by a client that did not know it; 4406: a token of single documents was
    /// used for another). No further attempt follows:
    /// ``stopped`` comes next.
    case refused(code: UInt16, reason: String)
    /// The connection stopped for good (``LiveSync/stop()``, or after ``refused(code:reason:)``).
    case stopped
}
