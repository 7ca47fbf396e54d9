import Foundation
import Hummingbird
import VaneCore

/// Client fetch: the values one app instance gets, evaluated on the server from memory.
///
/// The response's ETag is a ``ResultETag``: its first part names this context's entries and
/// metadata, so `If-None-Match` answers 304 (and a body `etag` answers `NO_CHANGE`, for clients
/// that cannot handle 304) whenever this user's result is unchanged, even across publishes. Its
/// proof lets the common poll (same body, nothing published since) answer 304 without parsing
/// or evaluating anything.
struct FetchRoutes {
    let cache: ServingCache
    let limiter: RateLimiter

    func register(on group: RouterGroup<VaneRequestContext>) {
        group.post("fetch", use: fetch)
    }

    @Sendable func fetch(_ request: Request, context: VaneRequestContext) async throws -> Response {
        let environment = try RequestReading.environment(context)
        let principal = try context.requirePrincipal()
        try principal.require([.client, .server], on: environment)
        if let wait = limiter.acquire(key: principal.key.id) { throw APIError.rateLimited(retryAfterSeconds: wait) }
        let body = try await RequestReading.body(request, limit: ServerLimits.maximumContextBytes)
        let now = Date()
        let served = cache.template(for: environment)
        if let served {
            let nowMilliseconds = Clock.milliseconds(now)
            var current: String?
            _ = RequestReading.anyETag(inIfNoneMatch: request.headers) { candidate in
                guard let etag = ResultETag(candidate),
                    etag.isCurrent(served: served, body: body, nowMilliseconds: nowMilliseconds)
                else { return false }
                current = etag.headerValue
                return true
            }
            if let current { return Response(status: .notModified, headers: [.eTag: current]) }
        }
        let object = try RequestReading.object(parsing: body)
        let evaluationContext: EvaluationContext
        do {
            evaluationContext = try EvaluationContext(
                json: object["context"] ?? .object([:]),
                at: JSONPath.root.appending("context")
            )
        } catch {
            throw APIError.invalidArgument(
                "the context is malformed: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let clientETag = try RequestReading.optionalString(object, "etag")
        guard let served else {
            return JSONResponse.make(["state": "NO_TEMPLATE", "entries": [:], "templateVersion": "0"])
        }
        let result = served.compiled.evaluate(evaluationContext, at: now)
        let values = served.valuesDigest(of: result)
        let until = served.compiled.resultUnchangedUntil(for: evaluationContext, evaluatedAt: now)
        let etag = ResultETag(
            values: values,
            served: served,
            until: until == .distantFuture ? nil : Clock.milliseconds(until),
            body: body
        )
        .headerValue
        let unchanged: (Substring) -> Bool = { ResultETag($0)?.values == values }
        if RequestReading.anyETag(inIfNoneMatch: request.headers, { $0 == "*" || unchanged($0) }) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        if let clientETag, unchanged(RequestReading.bareETag(Substring(clientETag))) {
            return JSONResponse.make(
                text: #"{"state":"NO_CHANGE","templateVersion":"\#(served.versionNumber)"}"#,
                headers: [.eTag: etag]
            )
        }
        return Response(
            status: .ok,
            headers: [.eTag: etag, .contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: served.updateResponse(for: result)))
        )
    }
}
