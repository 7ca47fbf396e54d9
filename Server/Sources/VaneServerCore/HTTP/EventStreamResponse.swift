package import HTTPTypes
package import Hummingbird
package import NIOCore
import ServiceLifecycle

/// A Server-Sent Events response that tells one environment's new versions as they are served:
/// what Vane's `…/stream` and OFREP's `/ofrep/v1/events` share, each with its own event format.
///
/// The response's task writes the `retry:` line and the current version, then hands the
/// connection to the ``StreamHub``, which writes each later version and heartbeat on the
/// connection's event loop (``StreamSubscriber``), and waits for the end. A slow client never
/// holds up a publish or another client; because every event names the newest version, an event
/// skipped while its client was not reading loses nothing. Streams end when the server shuts
/// down, when the client goes away, and when the key or token that opened them is revoked or
/// expires.
package struct EventStreamResponse {
    package let cache: ServingCache
    package let hub: StreamHub

    package init(cache: ServingCache, hub: StreamHub) {
        self.cache = cache
        self.hub = hub
    }

    /// The reconnect delay sent in `retry:`, in milliseconds.
    package static let retryMilliseconds = 3000
    package static let lastEventIDHeader = HTTPField.Name("Last-Event-ID")

    /// The version a reconnecting client names in `Last-Event-ID`, if it names one.
    package static func lastEventId(_ request: Request) -> Int64? {
        lastEventIDHeader.flatMap { request.headers[$0] }.flatMap { Int64($0) }
    }

    /// A streaming response on `channel`: the current version unless `after` covers it, then
    /// every newer one in `format`, heartbeats between.
    /// - Parameters:
    ///   - credential: What opened the stream; when it is revoked or expires, the stream ends.
    ///   - address: The client's address, which the hub's caps count.
    package func response(
        for environment: EnvironmentKey,
        credential: StreamHub.Credential,
        address: String,
        after known: Int64,
        channel: any Channel,
        format: StreamEventFormat
    ) -> Response {
        let body = ResponseBody { [hub, cache] writer in
            // Subscribed only once the body is being written, and always unsubscribed when it
            // ends: a client that resets the connection before the response head goes out leaves
            // nothing behind. Connect before reading the current version, so a publish in between
            // is kept for the stream and not missed.
            let subscriber = hub.connect(
                environment,
                credential: credential,
                address: address,
                channel: channel,
                format: format
            )
            var connected = true
            defer { if connected { hub.disconnect(subscriber, from: environment) } }
            let current = cache.template(for: environment)?.versionNumber ?? 0
            var lastSent = known
            try await writer.write(ByteBuffer(string: "retry: \(Self.retryMilliseconds)\n\n"))
            if current > lastSent {
                try await writer.write(format.encode(current))
                lastSent = current
            }
            // The writes above are queued on the channel's event loop before the hub's, which go
            // through the same loop in order.
            await withGracefulShutdownHandler {
                await subscriber.run(after: lastSent)
            } onGracefulShutdown: {
                subscriber.end()
            }
            // Out of the hub before the end goes out: a client that sees its stream end and opens
            // another at once is not refused by a cap still counting the old one.
            connected = false
            hub.disconnect(subscriber, from: environment)
            try await writer.finish(nil)
        }
        var headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"]
        // Room for this one and the server's `Date` and `Server`: the head lives as long as the
        // stream, and growing it twice left an array of twice that.
        headers.reserveCapacity(5)
        // Tells nginx-style proxies not to buffer the stream.
        if let noBuffering = HTTPField.Name("X-Accel-Buffering") { headers[noBuffering] = "no" }
        return Response(status: .ok, headers: headers, body: body)
    }
}
