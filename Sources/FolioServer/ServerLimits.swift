/// Bounds on what one client may make the server hold.
public struct ServerLimits: Hashable, Sendable {
    /// The largest WebSocket message accepted (a frame of the sync protocol); larger ones close the connection with
    /// 1009.
    public var messageBytes: Int
    /// Sessions kept per connection; opening one more forgets the oldest.
    public var sessionsPerConnection: Int
    /// Frames queued for a client that reads slowly before its connection is closed (1008).
    public var queuedFrames: Int
    /// Bytes queued for a client that reads slowly before its connection is closed (1008), so that many slow clients
    /// cannot hold the server's memory.
    public var queuedBytes: Int
    /// `changes` messages of a library waiting to be stored before new ones are refused (1013, try again later).
    public var waitingMessages: Int
    /// Connections open at once across the server; the next upgrade is refused with 503.
    public var connections: Int
    /// How long a connection the server asked to close (a protocol error, a client reading too slowly) has to end by
    /// itself before its socket is closed: a client that stopped reading takes neither the close frame nor the
    /// frames before it.
    public var closeGrace: Duration

    /// Creates limits.
    public init(
        messageBytes: Int = 16 << 20, sessionsPerConnection: Int = 8, queuedFrames: Int = 4096,
        queuedBytes: Int = 8 << 20, waitingMessages: Int = 65_536, connections: Int = 10_000,
        closeGrace: Duration = .seconds(10)
    ) {
        self.closeGrace = closeGrace
        self.queuedBytes = queuedBytes
        self.messageBytes = messageBytes
        self.sessionsPerConnection = sessionsPerConnection
        self.queuedFrames = queuedFrames
        self.waitingMessages = waitingMessages
        self.connections = connections
    }
}
