package import NIOCore
import NIOHTTPTypes

/// How a stream writes one version: Vane's `…/stream` and OFREP's event stream differ.
package struct StreamEventFormat: Sendable {
    /// Tells formats apart: a publish encodes each format in use once.
    package var name: String
    /// The event for a version.
    package var encode: @Sendable (Int64) -> ByteBuffer

    package init(name: String, encode: @escaping @Sendable (Int64) -> ByteBuffer) {
        self.name = name
        self.encode = encode
    }
}

/// One open event stream: ``StreamHub`` writes its events straight to its connection, on the
/// connection's event loop, while the response's task only waits for the end. A publish then
/// costs each subscriber one write on the thread that owns its socket, not a task woken and a
/// hop to that thread and back.
///
/// Everything mutable is read and changed on `channel.eventLoop` only. A connection that cannot
/// take more (its client stopped reading) is not written to; the newest version it missed is
/// kept (one number, so its memory stays bounded) and written as soon as it can take more.
package final class StreamSubscriber: @unchecked Sendable {
    package let id: Int
    package let credential: StreamHub.Credential
    package let address: String
    package let channel: any Channel
    let format: StreamEventFormat

    /// Whether the response's head and first events are out, so events go straight to the channel.
    private var isLive = false
    private var isEnded = false
    private var lastSent: Int64 = .min
    /// The newest version not yet written: heard before the stream was live, or while the
    /// connection could not take more.
    private var pending: Int64?
    private var waiter: CheckedContinuation<Void, Never>?
    private var connectionHandler: StreamConnectionHandler?

    init(id: Int, credential: StreamHub.Credential, address: String, channel: any Channel, format: StreamEventFormat) {
        self.id = id
        self.credential = credential
        self.address = address
        self.channel = channel
        self.format = format
    }

    /// Hands the stream to the hub once `known` is the newest version written, and returns when
    /// the stream ends: ended by the hub, by ``end()``, or by the client closing the connection.
    package func run(after known: Int64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                channel.eventLoop.execute { self.start(after: known, waiter: continuation) }
            }
        } onCancel: {
            end()
        }
    }

    /// Ends the stream; its task then finishes the response. From any thread.
    package func end() {
        channel.eventLoop.execute { self.finish() }
    }

    private func start(after known: Int64, waiter: CheckedContinuation<Void, Never>) {
        guard !isEnded else { return waiter.resume() }
        self.waiter = waiter
        isLive = true
        lastSent = max(lastSent, known)
        let handler = StreamConnectionHandler(subscriber: self)
        if (try? channel.pipeline.syncOperations.addHandler(handler)) != nil { connectionHandler = handler }
        channel.closeFuture.whenComplete { _ in self.finish() }
        writePending()
    }

    /// On the event loop: the stream is over; no event is written after this.
    func finish() {
        guard !isEnded else { return }
        isEnded = true
        isLive = false
        if let handler = connectionHandler {
            connectionHandler = nil
            channel.pipeline.syncOperations.removeHandler(handler, promise: nil)
        }
        waiter?.resume()
        waiter = nil
    }

    /// On the event loop: a new version, already encoded in this subscriber's format.
    func deliver(_ version: Int64, event: ByteBuffer) {
        guard !isEnded, version > lastSent else { return }
        guard isLive, channel.isWritable else {
            pending = max(pending ?? version, version)
            return
        }
        write(event, version: version)
    }

    /// On the event loop: a heartbeat comment, unless the connection cannot take it (the client
    /// is not reading, so it would only wait in memory).
    func heartbeat(_ comment: ByteBuffer) {
        guard isLive, !isEnded, channel.isWritable else { return }
        channel.writeAndFlush(HTTPResponsePart.body(comment), promise: nil)
    }

    /// On the event loop: credential checks of the heartbeat clock.
    func endIf(_ shouldEnd: (StreamHub.Credential) -> Bool) {
        if shouldEnd(credential) { finish() }
    }

    fileprivate func writePending() {
        guard isLive, !isEnded, let version = pending, channel.isWritable else { return }
        pending = nil
        if version > lastSent { write(format.encode(version), version: version) }
    }

    private func write(_ event: ByteBuffer, version: Int64) {
        lastSent = version
        pending = nil
        channel.writeAndFlush(HTTPResponsePart.body(event), promise: nil)
    }
}

/// Tells a subscriber when its connection can take more again, so the version it missed goes
/// out at once, and when its client closed the connection (the server half-closes connections
/// rather than closing them when the client's side ends, so no close future would fire until a
/// write failed). Removed when the stream ends (the connection may serve further requests).
private final class StreamConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    let subscriber: StreamSubscriber

    init(subscriber: StreamSubscriber) {
        self.subscriber = subscriber
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { subscriber.writePending() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client sent its end: it is gone (an event stream's client never sends more).
        if case ChannelEvent.inputClosed = event { subscriber.finish() }
        context.fireUserInboundEventTriggered(event)
    }
}
