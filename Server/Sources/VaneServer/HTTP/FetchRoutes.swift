import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import VaneCore
import VaneServerCore

/// Client fetch: the values one app instance gets, evaluated on the server from memory.
///
/// The HTTP side only: the key, the rate limits and the body's size. ``FetchResponder`` decides
/// the answer; this turns it into a response.
struct FetchRoutes {
    let cache: ServingCache
    let limiter: RateLimiter
    let servedVersions: ServedVersionLog
    /// What "now" is for conditions on the time and for ETags that expire with them.
    let clock: ServerClock

    /// The route, under the environment's path.
    static let path: RouterPath = "fetch"

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post(Self.path, use: fetch)
    }

    /// The route as the router calls it, the environment in the path's parameters.
    @Sendable func fetch(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await fetch(request, context: context, environment: try RequestReading.environment(context))
    }

    /// The route for an environment read from the path (``FetchRequestChain`` reads it without the
    /// router's parameters).
    func fetch(_ request: Request, context: VaneRequestContext, environment: EnvironmentKey) async throws -> Response {
        let principal = try context.requirePrincipal()
        try principal.require(.fetch(environment))
        let body = try await RequestReading.body(request, limit: ServerLimits.maximumContextBytes)
        // Hashed once: the digest tells installations apart for the limit and proves ETags.
        let bodyDigest = Digest128(hashing: body)
        if let refusal = limiter.acquire(keyId: principal.id, address: context.clientAddress, body: bodyDigest) {
            throw APIError.rateLimited(refusal)
        }
        let served = cache.template(for: environment)
        let outcome: FetchOutcome
        do {
            outcome = try FetchResponder.respond(
                body: body,
                digest: bodyDigest,
                ifNoneMatch: request.headers,
                now: clock.now(),
                served: served
            )
        } catch {
            throw APIError(error)
        }
        // The first answer with a version on this node records it, before the app can send an
        // exposure of it.
        if let served, !served.fetchRecorded.load(ordering: .relaxed) {
            do {
                try await servedVersions.record(served.versionNumber, in: environment)
                served.fetchRecorded.store(true, ordering: .relaxed)
            } catch {
                context.logger.warning(
                    "could not record that version \(served.versionNumber) was fetched; the next fetch tries again",
                    metadata: ["error": "\(error)"]
                )
            }
        }
        switch outcome {
        case .notModified(let etag):
            return Response(status: .notModified, headers: [.eTag: etag])
        case .noChange(let etag, let templateVersion):
            return JSONResponse.make(
                bytes: FetchResponseBody.noChangeBytes(templateVersion: templateVersion),
                headers: [.eTag: etag]
            )
        case .update(let etag, let body):
            return Response(
                status: .ok,
                headers: [.eTag: etag, .contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: body)
            )
        case .noTemplate:
            return JSONResponse.make(bytes: FetchResponseBody.noTemplateBytes)
        }
    }
}
