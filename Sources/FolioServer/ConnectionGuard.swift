import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Every TCP connection the server accepted and has not closed yet, whatever it has sent: the count behind
/// ``ServerLimits/pendingConnections`` and the list the shutdown deadline closes.
final class ConnectionTracker: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    /// Connections open now.
    var count: Int { channels.withLock { $0.count } }

    /// Counts `channel` in; returns the number open, itself included.
    func opened(_ channel: any Channel) -> Int {
        channels.withLock { open in
            open[ObjectIdentifier(channel)] = channel
            return open.count
        }
    }

    func closed(_ channel: any Channel) {
        _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes every connection's socket at once, without waiting for its peer.
    func closeAll() {
        for channel in channels.withLock({ Array($0.values) }) {
            channel.triggerUserOutboundEvent(ConnectionGuard.CloseNow(), promise: nil)
        }
    }
}

/// The first handler of every accepted connection, in front of the HTTP decoder: it sees raw bytes.
///
/// - It counts the connection, and closes it at once when more connections than ``ServerLimits/pendingConnections``
///   are open without a WebSocket of a valid token.
/// - It gives the connection ``ServerLimits/requestTimeout`` to send a whole first request: past it the server answers
///   408 and closes. Any answer (an HTTP response, the 101 of an upgrade) stops the timer.
/// - A close asked for by the handlers behind it is a lingering close: the server stops writing (after what is
///   queued), reads and throws away what the peer still sends, and closes when the peer does or
///   ``ServerLimits/closeGrace`` later. A peer still sending (a frame over the limit, a request after an error) would
///   otherwise get a TCP reset in place of the answer.
/// - When the server shuts down, a connection that has not been answered yet is closed at once.
/// - It defers a flush to the end of the event loop's current round of tasks, so that the frames several tasks write
///   to the connection in that round (a change pushed and its notice, pushes of several batches) leave in one system
///   call, not one each. A close flushes first.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// A user outbound event that closes the socket at once (the shutdown deadline).
    struct CloseNow: Sendable {}

    /// What the guard needs from the server.
    struct Settings: Sendable {
        var requestTimeout: Duration
        var closeGrace: Duration
        var tracker: ConnectionTracker
        /// Called once the connection is counted, with the number of connections open: a refusal closes it.
        var admit: @Sendable (_ open: Int) -> String?
        /// A refused or failed connection, for the log.
        var refused: @Sendable (_ peer: String, _ reason: String) -> Void
    }

    private let settings: Settings
    private var started = false
    private(set) var answered = false
    private var lingering = false
    private var firstRequestTimer: Scheduled<Void>?
    private var lingerTimer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    /// Whether a flush was asked for and waits for the end of the event loop's round.
    private var flushDeferred = false

    init(settings: Settings) {
        self.settings = settings
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        flushNow()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        if started { settings.tracker.closed(context.channel) }
        context.fireChannelInactive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let open = settings.tracker.opened(context.channel)
        if let refusal = settings.admit(open) {
            settings.refused(Self.peer(context.channel), refusal)
            answered = true
            context.close(mode: .all, promise: nil)
            return
        }
        firstRequestTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(settings.requestTimeout)) {
            [self] in
            self.firstRequestTimer = nil
            guard !self.answered, let context = self.context else { return }
            self.settings.refused(Self.peer(context.channel), "no whole request within \(self.settings.requestTimeout)")
            self.answer(context, status: "408 Request Timeout")
        }
    }

    private func cancelTimers() {
        firstRequestTimer?.cancel()
        firstRequestTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
    }

    static func peer(_ channel: any Channel) -> String { channel.remoteAddress?.description ?? "?" }

    /// Answers a connection that has had no answer yet with a bare `status` and closes it.
    private func answer(_ context: ChannelHandlerContext, status: String) {
        guard !answered else { return }
        answered = true
        firstRequestTimer?.cancel()
        firstRequestTimer = nil
        let text = "HTTP/1.1 \(status)\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer(string: text))), promise: nil)
        linger(context, promise: nil)
    }

    /// A request that does not parse before anything was answered (a garbage request line, TLS or HTTP/2 bytes, request
    /// smuggling shapes, headers over the decoder's bounds): 400, and the connection is closed.
    func requestFailedToParse(_ error: any Error) {
        guard let context, !answered, context.channel.isActive else { return }
        settings.refused(Self.peer(context.channel), "a request that does not parse: \(error)")
        answer(context, status: "400 Bad Request")
    }

    /// Called once the HTTP side of the connection is done with it: a connection it left open without an answer (its
    /// first request did not parse) is answered 400; any connection still open is closed.
    func handlerFinished() {
        guard let context, context.channel.isActive else { return }
        if !answered {
            settings.refused(Self.peer(context.channel), "a request that does not parse")
            answer(context, status: "400 Bad Request")
        } else {
            linger(context, promise: nil)
        }
    }

    private func linger(_ context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        flushNow()
        if let promise { context.channel.closeFuture.cascade(to: promise) }
        guard !lingering else { return }
        lingering = true
        guard context.channel.isActive else {
            context.close(mode: .all, promise: nil)
            return
        }
        context.close(mode: .output, promise: nil)
        scheduleLingerTimer(context)
        context.read()
    }

    private func scheduleLingerTimer(_ context: ChannelHandlerContext) {
        guard lingerTimer == nil else { return }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(settings.closeGrace)) { [self] in
            self.lingerTimer = nil
            self.context?.close(mode: .all, promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if lingering {
            context.read()
        } else {
            context.fireChannelReadComplete()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !answered {
            answered = true
            firstRequestTimer?.cancel()
            firstRequestTimer = nil
        }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        guard !flushDeferred else { return }
        flushDeferred = true
        // A task queued now runs after those queued before it: the writes they make are flushed with this one.
        context.eventLoop.assumeIsolated().execute { [self] in
            self.flushNow()
        }
    }

    /// Flushes what waits for a deferred flush, if anything does.
    private func flushNow() {
        guard flushDeferred else { return }
        flushDeferred = false
        context?.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow()
        switch mode {
        case .all:
            linger(context, promise: promise)
        case .output:
            // The peer has `closeGrace` to close its side too.
            scheduleLingerTimer(context)
            context.close(mode: .output, promise: promise)
        case .input:
            context.close(mode: .input, promise: promise)
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is CloseNow {
            flushNow()
            context.close(mode: .all, promise: nil)
            promise?.succeed()
        } else {
            context.triggerUserOutboundEvent(event, promise: promise)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !answered {
            // Shutting down: a connection that has not even sent its request is not waited for.
            answered = true
            flushNow()
            context.close(mode: .all, promise: nil)
            return
        }
        if let event = event as? ChannelEvent, event == .inputClosed, lingering {
            flushNow()
            context.close(mode: .all, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(error)
    }
}

/// The last handler while a connection's first request is read: NIO's upgrade handler leaves the HTTP decoder's errors
/// to the end of the pipeline, where nothing answers them. Once anything is read past it (Hummingbird's HTTP handlers,
/// or a WebSocket) it only passes things on.
final class ParseErrorCatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let guardHandler: ConnectionGuard
    private var passed = false

    init(guardHandler: ConnectionGuard) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        passed = true
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !passed { guardHandler.requestFailedToParse(error) }
        context.fireErrorCaught(error)
    }
}

/// Bounds the time to read one HTTP request once its head arrived: a body dripped slower than
/// ``ServerLimits/requestTimeout`` closes the connection. (The head of the first request is bounded by
/// ``ConnectionGuard``, those of later requests by the idle timeout.)
final class RequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: Duration
    private let refused: @Sendable (_ peer: String, _ reason: String) -> Void
    private var timer: Scheduled<Void>?

    init(timeout: Duration, refused: @escaping @Sendable (_ peer: String, _ reason: String) -> Void) {
        self.timeout = timeout
        self.refused = refused
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            timer?.cancel()
            let timeout = self.timeout
            let refused = self.refused
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) {
                refused(ConnectionGuard.peer(context.channel), "a request not read whole within \(timeout)")
                context.close(mode: .all, promise: nil)
            }
        case .end:
            timer?.cancel()
            timer = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }
}

/// A server child channel with a ``ConnectionGuard`` at the front of each connection's pipeline, whose connections are
/// handled apart from the service group's graceful shutdown: the server closes them itself when it stops (1001, then
/// ``ServerLimits/shutdownGrace``), rather than each WebSocket closing with 1000 on its own.
struct GuardedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        let guardHandler: NIOLoopBound<ConnectionGuard>
        var channel: any Channel { inner.channel }
    }

    let inner: Inner
    let settings: ConnectionGuard.Settings

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let handler = ConnectionGuard(settings: settings)
        do {
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(ParseErrorCatcher(guardHandler: bound.value))
            return Value(inner: value, guardHandler: bound)
        }
    }

    func handle(value: Value, logger: Logger) async {
        let inner = self.inner
        // Hummingbird logs an error for each connection that closes before its first request is read (timed out,
        // refused, at shutdown), which an attacker could fill the log with; the guard logs those itself, rate-limited.
        var quiet = logger
        quiet.logLevel = .critical
        // Detached: no task-local graceful shutdown reaches the connection's handlers.
        let task = Task.detached { [quiet] in await inner.handle(value: value.inner, logger: quiet) }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        let guardHandler = value.guardHandler
        value.channel.eventLoop.execute { guardHandler.value.handlerFinished() }
    }
}
