import Foundation
import Hummingbird
import NIOCore
import VaneCore

/// Client fetch: the values one app instance gets, evaluated on the server from memory.
///
/// The HTTP side only: the key, the rate limits and the body's size. ``FetchResponder`` decides
/// the answer; this turns it into a response.
struct FetchRoutes {
    let cache: ServingCache
    let limiter: RateLimiter

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("fetch", use: fetch)
    }

    @Sendable func fetch(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        let principal = try context.requirePrincipal()
        try principal.require(.fetch(environment))
        let body = try await RequestReading.body(request, limit: ServerLimits.maximumContextBytes)
        // Hashed once: the digest tells installations apart for the limit and proves ETags.
        let bodyDigest = Digest128(hashing: body)
        if let refusal = limiter.acquire(keyId: principal.id, address: context.clientAddress, body: bodyDigest) {
            throw APIError.rateLimited(refusal)
        }
        let outcome: FetchOutcome
        do {
            outcome = try FetchResponder.respond(
                body: body,
                digest: bodyDigest,
                ifNoneMatch: request.headers,
                now: Date(),
                served: cache.template(for: environment)
            )
        } catch {
            throw APIError(error)
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
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        case .noTemplate:
            return JSONResponse.make(bytes: FetchResponseBody.noTemplateBytes)
        }
    }
}
