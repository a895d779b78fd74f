/// Bounds on what one client may make the server hold.
public struct ServerLimits: Hashable, Sendable {
    /// The largest WebSocket message accepted (a frame of the sync protocol); larger ones close the connection with
    /// 1009.
    public var messageBytes: Int
    /// Sessions kept per connection; opening one more forgets the oldest.
    public var sessionsPerConnection: Int
    /// Bytes the sessions a connection keeps may hold, each counted as four times the hello that opened it (about
    /// what the hello takes decoded): past it the oldest sessions are forgotten, the newest is always kept. A
    /// finished session holds nothing. 32 MiB by default: sessions of hellos up to 8 MiB in all.
    public var sessionBytesPerConnection: Int = 32 << 20
    /// Bytes of `changes` messages of one connection read and not yet stored: past it the server reads no more from
    /// that connection until its batch is stored. 32 MiB by default.
    public var bytesInFlightPerConnection: Int = 32 << 20
    /// Bytes the server holds for all its clients at once (messages read and not yet stored, kept
    /// hellos, queued frames). While it is spent the server reads no more `changes` messages (a reader waiting
    /// longer than ``stallTimeout`` is closed with 1013) and refuses new sessions (1013). 1 GiB by default
    /// (`folio serve --memory-budget`).
    public var memoryBudget: Int = 1 << 30
    /// Documents a library may hold; a hello announcing more is refused (1008), and changes that would create more
    /// are refused (4413). 100,000 by default (`folio serve --documents-per-library`).
    public var documentsPerLibrary: Int = 100_000
    /// Devices a library's log may hold by name (a device is named by its own hello, once it wrote a change that its
    /// key signed): past it no more names are recorded. 4,096 by default; with names of at most 1 KiB, the names a
    /// hello from the server carries stay under 5 MiB.
    public var namedDevicesPerLibrary: Int = 4_096
    /// Bytes a library's log may take on disk; a `changes` message arriving while it is larger is refused (4413).
    /// 4 GiB by default (`folio serve --library-quota`).
    public var libraryQuota: Int = 4 << 30
    /// Documents the server asks a client for at once during a session; the next is asked for once one of them is
    /// complete, so a hello announcing many documents costs the server a window of requests, not one per document.
    public var requestWindow: Int = 16
    /// Pushed frames (other devices' changes, notices) queued for a client that reads slowly before its connection is
    /// closed (1008). A client's whole queue, replies included, over half this (or half ``queuedBytes``) pauses its
    /// session's replies and the reading of its messages until the queue drains to a quarter.
    public var queuedFrames: Int
    /// Bytes of pushed frames queued for a client that reads slowly before its connection is closed (1008), so that
    /// many slow clients cannot hold the server's memory; see ``queuedFrames`` for the pacing of replies.
    public var queuedBytes: Int
    /// `changes` messages of a library waiting to be stored before new ones are refused (1013, try again later).
    public var waitingMessages: Int
    /// Connections open at once across the server; the next upgrade is refused with 503.
    public var connections: Int
    /// How long a client may leave what it was sent unread (its queue over half full) before its connection is closed
    /// (1008); meanwhile the server reads nothing more from it.
    public var stallTimeout: Duration
    /// How long a connection the server asked to close (a protocol error, a client reading too slowly) has to end by
    /// itself before its socket is closed: a client that stopped reading takes neither the close frame nor the
    /// frames before it.
    public var closeGrace: Duration
    /// How long a connection has to send a whole HTTP request: its first request's head from the moment it is
    /// accepted (past it the server answers 408 and closes), and any request's body from its head (past it the
    /// connection is closed). 10 s by default (`folio serve --request-timeout`).
    public var requestTimeout: Duration = .seconds(10)
    /// TCP connections open at once that are not a WebSocket of a valid token (a request not yet sent or answered, an
    /// HTTP keep-alive, an upgrade being checked); a connection accepted past it is closed at once, before a byte is
    /// read. Every accepted connection counts until it closes. 512 by default (`folio serve --max-pending-connections`).
    public var pendingConnections: Int = 512
    /// WebSocket connections open at once with one token; the next upgrade is refused (1013). 64 by default
    /// (`folio serve --max-connections-per-token`).
    public var connectionsPerToken: Int = 64
    /// WebSocket connections open at once to one library; the next upgrade is refused (1013). 1,000 by default
    /// (`folio serve --max-connections-per-library`).
    public var connectionsPerLibrary: Int = 1_000
    /// WebSocket connections open at once from one remote address; the next upgrade is refused (1013). 1,000 by
    /// default (`folio serve --max-connections-per-address`); behind a proxy every client has the proxy's address, so
    /// raise it to ``connections`` there.
    public var connectionsPerAddress: Int = 1_000
    /// How long a WebSocket connection has, from its upgrade, to send its first message, which must be a `hello`;
    /// past it the connection is closed with 1008. 10 s by default (`folio serve --hello-timeout`).
    public var helloTimeout: Duration = .seconds(10)
    /// Bytes of one presence state (a `SyncFrame.presence` frame's state, which the server relays without decoding);
    /// a larger one closes the connection with 1009. 1,024 by default (`folio serve --presence-bytes`); at most
    /// `SyncFrame.maximumPresenceBytes` (4,096), past which a frame does not decode.
    public var presenceBytes: Int = 1_024
    /// Presence frames one connection may send a second, in bursts of as many: a token bucket per connection. A frame
    /// past it is dropped (neither kept nor relayed, counted in `folio_presence_dropped_total`) and the connection
    /// stays open; an empty state that takes away a state the connection shows is never dropped for the rate (it
    /// follows a state that passed, so it at most doubles it). 30 by default (`folio serve --presence-per-second`).
    public var presencePerSecond: Int = 30
    /// Documents in which one connection may show a presence state at once: a non-empty state for one more document
    /// is dropped (counted in `folio_presence_dropped_total`) until the connection empties one. With
    /// ``presenceBytes``, what a connection's presence makes the server hold: 16 × 1,024 bytes by default
    /// (`folio serve --presence-documents`).
    public var presenceDocuments: Int = 16
    /// Changes one grantee (a server token, or an app's user, across all their connections) may send a second, in
    /// bursts of ten seconds' worth (a `blobs` message counts one for each 64 KiB, any upload at least one): while the
    /// allowance is in debt, the server reads nothing more from the grantee's connections until it is paid (the
    /// sender is slowed, not refused, and its flood waits in its own sockets); a connection whose grantee is more than
    /// 20 s in debt (one message of more than thirty seconds' worth) is closed (1013). 10,000 by default (`folio serve
    /// --changes-per-second`).
    public var changesPerSecond: Int = 10_000
    /// Server tokens one library may have, revoked ones included (they stay listed); issuing one more through the
    /// admin API is refused (409). 1,000 by default (`folio serve --tokens-per-library`).
    public var tokensPerLibrary: Int = 1_000
    /// Shares one library may have, of the whole library and of its documents together; one more through the admin
    /// API is refused (409). 10,000 by default (`folio serve --shares-per-library`). One user has at most
    /// `SyncScope.maximumDocuments` (4,096) documents of a library shared with them.
    public var sharesPerLibrary: Int = 10_000
    /// How long the server takes at most to stop after SIGTERM or SIGINT: it stops accepting, closes WebSockets with
    /// 1001, lets connections end, and closes the sockets of those still open at this deadline. 10 s by default
    /// (`folio serve --shutdown-grace`).
    public var shutdownGrace: Duration = .seconds(10)

    /// Creates limits.
    public init(
        messageBytes: Int = 16 << 20, sessionsPerConnection: Int = 8, queuedFrames: Int = 4096,
        queuedBytes: Int = 8 << 20, waitingMessages: Int = 65_536, connections: Int = 10_000,
        stallTimeout: Duration = .seconds(60), closeGrace: Duration = .seconds(10)
    ) {
        self.stallTimeout = stallTimeout
        self.closeGrace = closeGrace
        self.queuedBytes = queuedBytes
        self.messageBytes = messageBytes
        self.sessionsPerConnection = sessionsPerConnection
        self.queuedFrames = queuedFrames
        self.waitingMessages = waitingMessages
        self.connections = connections
    }
}
