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
    /// The connection's handler, which tells this stream when the connection can take more again
    /// and when the client has gone.
    private var connection: HTTPConnectionHandler?

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
        // Closed before the stream started: its handler would never hear of it. Every connection
        // Vane serves has the handler (VaneHTTP1Channel); a stream nothing would tell of its
        // client's end is not kept.
        guard channel.isActive,
            let connection = try? channel.pipeline.syncOperations.handler(type: HTTPConnectionHandler.self)
        else { return finish() }
        self.connection = connection
        connection.attach(self)
        writePending()
    }

    /// On the event loop: the stream is over; no event is written after this.
    func finish() {
        guard !isEnded else { return }
        isEnded = true
        isLive = false
        connection?.detach(self)
        connection = nil
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

    func writePending() {
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
