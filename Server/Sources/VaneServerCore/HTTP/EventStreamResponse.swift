package import HTTPTypes
package import Hummingbird
import ServiceLifecycle

/// A Server-Sent Events response that tells one environment's new versions as they are served:
/// what Vane's `…/stream` and OFREP's `/ofrep/v1/events` share, each with its own event text.
///
/// Each connection reads from its own small buffer in the ``StreamHub`` that keeps only the
/// newest items, so a slow client never holds up a publish or another client; because every
/// event names the newest version, a dropped event loses nothing. Streams end when the server
/// shuts down, and when the key or token that opened them is revoked or expires.
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

    /// A streaming response: the current version unless `after` covers it, then every newer one
    /// as `event(version)`, heartbeats between.
    /// - Parameters:
    ///   - credential: What opened the stream; when it is revoked or expires, the stream ends.
    ///   - address: The client's address, which the hub's caps count.
    package func response(
        for environment: EnvironmentKey,
        credential: StreamHub.Credential,
        address: String,
        after known: Int64,
        event: @escaping @Sendable (Int64) -> ByteBuffer
    ) -> Response {
        let body = ResponseBody { [hub, cache] writer in
            // Subscribed only once the body is being written, and always unsubscribed when it
            // ends: a client that resets the connection before the response head goes out leaves
            // nothing behind. Connect before reading the current version, so a publish in between
            // is not missed.
            let (id, items) = hub.connect(environment, credential: credential, address: address)
            defer { hub.disconnect(id, from: environment) }
            let current = cache.template(for: environment)?.versionNumber ?? 0
            var lastSent = known
            try await writer.write(ByteBuffer(string: "retry: \(Self.retryMilliseconds)\n\n"))
            if current > lastSent {
                try await writer.write(event(current))
                lastSent = current
            }
            try await withGracefulShutdownHandler {
                for await item in items {
                    switch item {
                    case .version(let version) where version > lastSent:
                        try await writer.write(event(version))
                        lastSent = version
                    case .version:
                        continue
                    case .heartbeat:
                        try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                    }
                }
            } onGracefulShutdown: {
                hub.disconnect(id, from: environment)
            }
            try await writer.finish(nil)
        }
        var headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"]
        // Tells nginx-style proxies not to buffer the stream.
        if let noBuffering = HTTPField.Name("X-Accel-Buffering") { headers[noBuffering] = "no" }
        return Response(status: .ok, headers: headers, body: body)
    }
}
