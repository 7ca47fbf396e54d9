import HTTPTypes
import Hummingbird
import ServiceLifecycle
import VaneCore

/// Server-Sent Events: `GET …/stream` tells clients the moment a new template version is served.
///
/// ```
/// retry: 3000
///
/// id: 7
/// event: version
/// data: {"templateVersion":"7"}
///
/// : heartbeat
/// ```
///
/// On connect the stream sends the current version unless `Last-Event-ID` already names it (a
/// client that reconnects after missing a publish learns of it at once), then one event per new
/// version and a heartbeat comment every ``heartbeatSeconds``. Each connection reads from its own
/// small buffer that keeps only the newest items, so a slow client never holds up a publish or
/// another client; because every event names the newest version, a dropped event loses nothing.
/// Streams end when the server shuts down.
struct StreamRoutes {
    let cache: ServingCache
    let hub: StreamHub

    /// The reconnect delay sent in `retry:`, in milliseconds.
    static let retryMilliseconds = 3000
    static let lastEventIDHeader = HTTPField.Name("Last-Event-ID")

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.get("stream", use: stream)
    }

    @Sendable func stream(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        try context.requirePrincipal().require([.client, .server], on: environment)
        return response(for: environment, after: Self.lastEventId(request) ?? -1, event: Self.event(version:))
    }

    /// The version a reconnecting client names in `Last-Event-ID`, if it names one.
    static func lastEventId(_ request: Request) -> Int64? {
        lastEventIDHeader.flatMap { request.headers[$0] }.flatMap { Int64($0) }
    }

    /// A streaming response: the current version unless `after` covers it, then every newer one
    /// as `event(version)`, heartbeats between. Shared by Vane's stream and OFREP's.
    func response(
        for environment: EnvironmentKey,
        after known: Int64,
        event: @escaping @Sendable (Int64) -> ByteBuffer
    ) -> Response {
        // Connect before reading the current version, so a publish in between is not missed.
        let (id, items) = hub.connect(environment)
        let current = cache.template(for: environment)?.versionNumber ?? 0
        let body = ResponseBody { [hub] writer in
            defer { hub.disconnect(id, from: environment) }
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

    /// One `version` event.
    static func event(version: Int64) -> ByteBuffer {
        ByteBuffer(string: "id: \(version)\nevent: version\ndata: {\"templateVersion\":\"\(version)\"}\n\n")
    }
}
