import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// One per HTTP connection, after the HTTP decoder: cuts off a client that does not send what
/// the `ConnectionLimits` ask in time, so a stalled or trickling upload costs only its sender.
///
/// - Waiting for a request head (a new connection: `headerTimeout`; after a response:
///   `keepAliveTimeout`), the connection is idle: at the deadline it is closed, and the
///   `ConnectionRegistry` may close it sooner to make room for a new one.
/// - Reading a body, the clock runs only while the server has asked for bytes and the client
///   has not sent them (NIO's backpressure holds reads back while a handler is busy, and that
///   time is the server's, not the client's). Past `bodyTimeout` of that time, or below
///   `bodyMinimumBytesPerSecond` on average after `bodyGrace`, the request's body fails with
///   `UploadTooSlow`, which the handler answers (408), and the connection closes after it.
/// - Once the body is whole, nothing is timed: the response may take as long as it takes
///   (an event stream, for an hour).
///
/// Every method runs on the channel's event loop.
final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What reading a body that came too slowly throws instead of its remaining bytes.
    struct UploadTooSlow: Error, Sendable {
        let receivedBytes: Int
        /// `body_timeout` or `body_too_slow`.
        let rule: String
    }

    private enum Phase {
        case awaitingHead
        case readingBody
        case responding
    }

    /// Where the connection is, from counts rather than flags: with pipelining, a response to
    /// one request can start or end while the next request is being read, and a flag shared by
    /// the two took the earlier response for the later request's (a connection was once timed
    /// as idle while a pipelined response was still being written).
    private var phase: Phase {
        if endsRead < headsRead { return .readingBody }
        if responsesEnded < headsRead { return .responding }
        return .awaitingHead
    }

    /// How long after cutting a body the connection closes even if no response was written.
    /// Generous: the handler answers once it reads the body, which may be after it waited for
    /// a database connection (authentication) on a busy server.
    static let closeAfterCut = TimeAmount.seconds(60)

    private let limits: ConnectionLimits
    private let registry: ConnectionRegistry
    private let metrics: ServerMetrics
    private var id: Int?
    // Requests are answered in order (HTTP/1.1), so counts say which response is whose.
    private var headsRead = 0
    private var endsRead = 0
    private var responsesStarted = 0
    private var responsesEnded = 0
    private var closeAfterResponse = false
    private var timer: Scheduled<Void>?
    // The body's clock: bytes so far, client time so far, and when the outstanding read began.
    private var bodyBytes = 0
    private var bodyStarted = NIODeadline.now()
    private var clientTime = TimeAmount.zero
    private var readRequestedAt: NIODeadline?

    init(limits: ConnectionLimits, registry: ConnectionRegistry, metrics: ServerMetrics) {
        self.limits = limits
        self.registry = registry
        self.metrics = metrics
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context)
        context.fireChannelActive()
    }

    private func opened(_ context: ChannelHandlerContext) {
        guard id == nil else { return }
        let now = NIODeadline.now()
        switch registry.open(context.channel, now: now) {
        case .admitted(let id):
            self.id = id
            schedule(context, at: now + limits.headerTimeout.timeAmount)
        case .refused:
            id = -1
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let id, id >= 0 { registry.close(id) }
        id = -1
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let id, id >= 0 { registry.close(id) }
        id = -1
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After a cut, the rest of that request is read and discarded until the connection closes.
        guard !closeAfterResponse else { return }
        let before = phase
        switch unwrapInboundIn(data) {
        case .head:
            headsRead += 1
            bodyBytes = 0
            bodyStarted = .now()
            clientTime = .zero
            if let id, id >= 0 { registry.markBusy(id) }
        case .body(let bytes):
            bodyBytes += bytes.readableBytes
        case .end:
            accountOutstandingRead(until: .now())
            readRequestedAt = nil
            endsRead += 1
        }
        enter(context, from: before)
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        accountOutstandingRead(until: .now())
        readRequestedAt = nil
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        // Reads go on after a cut (what arrives is discarded): closing with unread bytes would
        // reset the connection and lose the 408 on its way to the client.
        if readRequestedAt == nil { readRequestedAt = .now() }
        context.read()
    }

    /// Adds the time the current read has waited (within this body) to the client's time.
    private func accountOutstandingRead(until now: NIODeadline) {
        guard phase == .readingBody, let requested = readRequestedAt else { return }
        clientTime = clientTime + (now - max(requested, bodyStarted))
        readRequestedAt = now
    }

    private func clientTime(at now: NIODeadline) -> TimeAmount {
        guard let requested = readRequestedAt else { return clientTime }
        return clientTime + (now - max(requested, bodyStarted))
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head:
            responsesStarted += 1
        case .body:
            break
        case .end:
            let before = phase
            responsesEnded += 1
            if closeAfterResponse {
                context.writeAndFlush(data, promise: promise)
                context.close(promise: nil)
                return
            }
            // Idle only once every request read has been answered (a pipelined one may wait).
            // Answered before its body was read (413, 503): the body's clock runs on while the
            // server discards the rest.
            enter(context, from: before)
        }
        context.write(data, promise: promise)
    }

    // MARK: Deadlines

    /// Starts the clock of the phase just entered, if it changed.
    private func enter(_ context: ChannelHandlerContext, from before: Phase) {
        let now = phase
        guard now != before, !closeAfterResponse else { return }
        switch now {
        case .awaitingHead: awaitHead(context, within: limits.keepAliveTimeout)
        case .readingBody: checkBody(context)
        case .responding: cancelTimer()
        }
    }

    private func awaitHead(_ context: ChannelHandlerContext, within timeout: Duration) {
        let now = NIODeadline.now()
        if let id, id >= 0 { registry.markIdle(id, since: now) }
        schedule(context, at: now + timeout.timeAmount)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            fired(context)
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    private func fired(_ context: ChannelHandlerContext) {
        switch phase {
        case .awaitingHead:
            metrics.recordConnectionCut(reason: "header_timeout")
            context.close(promise: nil)
        case .readingBody:
            checkBody(context)
        case .responding:
            break
        }
    }

    /// Cuts the body off if it broke a rule, or schedules the next look at the earliest moment
    /// it could.
    private func checkBody(_ context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        let waited = clientTime(at: now)
        let rate = Int64(limits.bodyMinimumBytesPerSecond)
        let grace = limits.bodyGrace.timeAmount
        if waited >= limits.bodyTimeout.timeAmount {
            return cut(context, rule: "body_timeout")
        }
        if waited > grace, Int64(bodyBytes) * 1_000_000_000 < rate * (waited - grace).nanoseconds {
            return cut(context, rule: "body_too_slow")
        }
        // The client time at which the bytes so far stop being enough, or the deadline.
        let enoughUntil = grace + .nanoseconds(Int64(bodyBytes) * 1_000_000_000 / max(rate, 1))
        let next = min(enoughUntil, limits.bodyTimeout.timeAmount) - waited
        schedule(context, at: now + max(next, .milliseconds(100)))
    }

    private func cut(_ context: ChannelHandlerContext, rule: String) {
        metrics.recordConnectionCut(reason: rule)
        cancelTimer()
        // A response is being written (this request's, answered early, or an earlier one's):
        // no 408 can follow it in order, so the connection closes now.
        guard responsesStarted == responsesEnded, responsesStarted < headsRead else {
            context.close(promise: nil)
            return
        }
        // The handler reading the body gets the error and answers 408; the connection closes
        // after that answer, or soon if none comes.
        closeAfterResponse = true
        context.fireErrorCaught(UploadTooSlow(receivedBytes: bodyBytes, rule: rule))
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.closeAfterCut) { context.close(promise: nil) }
    }
}
