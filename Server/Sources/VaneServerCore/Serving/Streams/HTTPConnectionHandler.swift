package import NIOCore
package import NIOHTTPTypes

/// Each HTTP/1 connection's own state on its event loop: the idle timeout, the graceful
/// shutdown's close, and the hooks of an event stream written on it (``StreamSubscriber``).
///
/// It takes the place of Hummingbird's `HTTPConnectionStateHandler` and keeps its rules and its
/// timer: a connection that has read nothing for `idleTimeout` while no response is due is closed
/// (so is one whose request head or body trickles in and stops); one whose request is read and
/// whose response is being written is not idle, however long the response lasts; at a graceful
/// shutdown an idle connection is closed at once and a busy one after its response. The timer is
/// armed once and left to fire (a request costs no timer of its own); when it finds a response
/// being written it is not armed again until the response ends. What differs is an event stream:
/// its response lasts for hours, and the timer armed before it would stay scheduled for the first
/// `idleTimeout` of it, so a stream that attaches cancels it.
///
/// The stream hooks live here, not in a handler of their own, because every idle stream would
/// keep that handler, its pipeline context and a close-future callback for its whole life
/// (docs/PERFORMANCE.md: stream memory). It lives beside the streams, not in `HTTP/`, because
/// ``StreamSubscriber`` uses it and `Serving/` may not use `HTTP/`. Everything is read and changed
/// on the connection's event loop only.
package final class HTTPConnectionHandler: ChannelDuplexHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let idleTimeout: TimeAmount
    private var idleTask: Scheduled<Void>?
    /// The last read, or the end of the last response.
    private var lastActive = NIODeadline.now()
    /// Requests whose head was read and whose response has not ended.
    private var requestsInProgress = 0
    /// Between a request's head and its end.
    private var isRequestBeingRead = false
    private var closesAfterResponse = false
    /// The event stream being written on this connection, told when the connection can take more
    /// again and when the client has gone.
    private var stream: StreamSubscriber?

    /// - Parameter idleTimeout: How long a connection may wait for a request.
    package init(idleTimeout: TimeAmount) {
        self.idleTimeout = idleTimeout
    }

    /// On the event loop: `subscriber` is written on this connection until ``detach(_:)``.
    func attach(_ subscriber: StreamSubscriber) {
        stream = subscriber
        // Its request is read and its response lasts until it ends, which arms the timer again.
        if requestsInProgress > 0 && !isRequestBeingRead { cancelIdleTask() }
    }

    /// On the event loop: the stream ended.
    func detach(_ subscriber: StreamSubscriber) {
        if stream === subscriber { stream = nil }
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { becameActive(context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        cancelIdleTask()
    }

    package func channelActive(context: ChannelHandlerContext) {
        becameActive(context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        cancelIdleTask()
        stream?.finish()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastActive = .now()
        switch unwrapInboundIn(data) {
        case .head:
            requestsInProgress += 1
            isRequestBeingRead = true
            // Armed already unless a stream's response is being written (then this is a pipelined
            // request, whose body may stall).
            armIdleTimer(context)
        case .body:
            break
        case .end:
            isRequestBeingRead = false
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data), requestsInProgress > 0 else {
            return context.write(data, promise: promise)
        }
        requestsInProgress -= 1
        guard requestsInProgress == 0 else { return context.write(data, promise: promise) }
        if closesAfterResponse {
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
            return
        }
        lastActive = .now()
        if context.channel.isActive { armIdleTimer(context) }
        context.write(data, promise: promise)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { stream?.writePending() }
        context.fireChannelWritabilityChanged()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            // Not passed on, as Hummingbird's handler did not: the connection's task ends with it.
            if requestsInProgress > 0 {
                closesAfterResponse = true
            } else {
                context.close(promise: nil)
            }
        case ChannelEvent.inputClosed:
            // The client sent its end: an event stream's client is gone (it never sends more).
            // The server half-closes rather than closing, so nothing else would tell the stream
            // until a write failed.
            stream?.finish()
            context.fireUserInboundEventTriggered(event)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func becameActive(_ context: ChannelHandlerContext) {
        lastActive = .now()
        armIdleTimer(context)
    }

    /// Arms the timer for `idleTimeout` after the last activity, unless it is armed.
    private func armIdleTimer(_ context: ChannelHandlerContext) {
        guard idleTask == nil else { return }
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        idleTask = loop.scheduleTask(deadline: lastActive + idleTimeout) { [self] in
            idleTask = nil
            idleTimeoutFired(context)
        }
    }

    private func idleTimeoutFired(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        // A response is due: its end arms the timer again.
        if requestsInProgress > 0 && !isRequestBeingRead { return }
        if lastActive + idleTimeout <= .now() {
            context.close(promise: nil)
        } else {
            armIdleTimer(context)
        }
    }

    private func cancelIdleTask() {
        idleTask?.cancel()
        idleTask = nil
    }
}

@available(*, unavailable)
extension HTTPConnectionHandler: Sendable {}
