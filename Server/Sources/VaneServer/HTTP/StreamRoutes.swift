import Hummingbird
import VaneCore
import VaneServerCore

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
/// version and a heartbeat comment every ``ServerConfiguration/streamHeartbeatSeconds``
/// (``EventStreamResponse``).
struct StreamRoutes {
    let streams: EventStreamResponse

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.get("stream", use: stream)
    }

    @Sendable func stream(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        let principal = try context.requirePrincipal()
        try principal.require(.fetch(environment))
        if let refusal = streams.hub.admits(keyId: principal.id, address: context.clientAddress) {
            throw APIError.tooManyStreams(refusal)
        }
        let known = EventStreamResponse.lastEventId(request) ?? -1
        return streams.response(
            for: environment,
            credential: StreamHub.Credential(keyId: principal.id, expiry: nil),
            address: context.clientAddress,
            after: known,
            channel: context.channel,
            format: Self.format
        )
    }

    /// One `version` event.
    /// How the hub writes this stream's events.
    static let format = StreamEventFormat(name: "vane", encode: event(version:))

    static func event(version: Int64) -> ByteBuffer {
        ByteBuffer(string: VersionEvent(templateVersion: version).text)
    }
}
