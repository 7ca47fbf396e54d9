import Foundation
import HTTPTypes
import Hummingbird
import VaneServerCore

/// OFREP's change notifications (ADR-0008): `GET /ofrep/v1/events?since=N&token=T`, the URL
/// that bulk evaluations advertise in `eventStreams`.
///
/// ```
/// retry: 3000
///
/// id: 8
/// event: message
/// data: {"type":"refetchEvaluation","etag":"8"}
/// ```
///
/// The ``StreamToken`` in the URL authorizes it (providers send no headers to it). On connect the
/// stream sends a `refetchEvaluation` when a version newer than `since` (the version the bulk
/// response was evaluated from) or `Last-Event-ID` is already served, then one per new version.
/// Register before ``AuthenticationMiddleware``: refusals are OFREP's bodiless 401.
struct OFREPStreamRoutes {
    let keys: KeyIndex
    let streams: EventStreamResponse
    let secret: ServerSecret

    static let path = "/ofrep/v1/events"

    func register(on router: Router<VaneRequestContext>) {
        router.get("ofrep/v1/events", use: stream)
    }

    @Sendable func stream(_ request: Request, context: VaneRequestContext) async throws -> Response {
        guard let token = request.uri.queryParameters["token"].map(String.init) else { throw OFREPError.unauthorized }
        let opened: (environment: EnvironmentKey, keyId: String, expiry: Int64)
        do {
            opened = try StreamToken.open(token, keys: keys, secret: secret, now: Int64(Date().timeIntervalSince1970))
        } catch {
            throw OFREPError.unauthorized
        }
        if streams.hub.admits(keyId: opened.keyId, address: context.clientAddress) != nil {
            throw OFREPError.rateLimited(retryAfterSeconds: StreamHub.Refusal.retryAfterSeconds)
        }
        let since = request.uri.queryParameters["since"].flatMap { Int64(String($0)) } ?? -1
        let lastEventId = EventStreamResponse.lastEventId(request) ?? -1
        return streams.response(
            for: opened.environment,
            credential: StreamHub.Credential(keyId: opened.keyId, expiry: opened.expiry),
            address: context.clientAddress,
            after: max(since, lastEventId),
            channel: context.channel,
            format: Self.format
        )
    }

    /// The `eventStreams` member of a bulk response for `keyId`'s evaluation of `version`.
    func advertisement(keyId: String, environment: EnvironmentKey, version: Int64) -> String? {
        guard keys.key(id: keyId) != nil else { return nil }
        let expiry = Int64(Date().timeIntervalSince1970) + StreamToken.lifetimeSeconds
        let token = StreamToken.make(keyId: keyId, environment: environment, expiry: expiry, secret: secret)
        // Relative: providers put their own OFREP origin in front, which also works behind proxies.
        return #"[{"type":"sse","endpoint":{"requestUri":"\#(Self.path)?since=\#(version)&token=\#(token)"}}]"#
    }

    /// One OFREP `refetchEvaluation` event.
    /// How the hub writes this stream's events.
    static let format = StreamEventFormat(name: "ofrep", encode: event(version:))

    static func event(version: Int64) -> ByteBuffer {
        ByteBuffer(
            string: "id: \(version)\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"\(version)\"}\n\n"
        )
    }
}
