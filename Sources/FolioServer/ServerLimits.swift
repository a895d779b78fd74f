/// Bounds on what one client may make the server hold.
public struct ServerLimits: Hashable, Sendable {
    /// The largest WebSocket message accepted (a frame of the sync protocol); larger ones close the connection with
    /// 1009.
    public var messageBytes: Int
    /// Sessions kept per connection; opening one more forgets the oldest.
    public var sessionsPerConnection: Int
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
