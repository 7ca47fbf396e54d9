import Hummingbird
import VaneCore

/// Client fetch: the values one app instance gets, evaluated on the server from memory.
///
/// The response's ETag is a hash of this context's entries and metadata, so it changes only when
/// this user's result changes: `If-None-Match` then answers 304, and a body `etag` answers
/// `NO_CHANGE` for clients that cannot handle 304.
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
        let body = try await RequestReading.object(request, limit: ServerLimits.maximumContextBytes)
        let evaluationContext: EvaluationContext
        do {
            evaluationContext = try EvaluationContext(
                json: body["context"] ?? .object([:]),
                at: JSONPath.root.appending("context")
            )
        } catch {
            throw APIError.invalidArgument(
                "the context is malformed: \(error.issues.count) problem(s)",
                details: error.issues
            )
        }
        let clientETag = try RequestReading.optionalString(body, "etag")
        guard let served = cache.template(for: environment) else {
            return JSONResponse.make(["state": "NO_TEMPLATE", "entries": [:], "templateVersion": "0"])
        }
        let result = served.compiled.evaluate(evaluationContext)
        // Assembled from pieces the served template encoded at publish time: this is the hot path.
        var response: [UInt8] = []
        response.reserveCapacity(4096)
        response.append(contentsOf: #"{"state":"UPDATE","entries":{"#.utf8)
        let entriesStart = response.count - 1
        var metadata: [UInt8] = [UInt8(ascii: "{")]
        var first = true
        result.forEachEntry { parameter, branch, _ in
            if !first { response.append(UInt8(ascii: ",")) }
            first = false
            response.append(contentsOf: served.entryFragments[parameter][branch])
            let fragment = served.metadataFragments[parameter]
            if !fragment.isEmpty {
                if metadata.count > 1 { metadata.append(UInt8(ascii: ",")) }
                metadata.append(contentsOf: fragment)
            }
        }
        response.append(UInt8(ascii: "}"))
        metadata.append(UInt8(ascii: "}"))
        let etag = ServedTemplate.resultETag(entries: response[entriesStart...], metadata: metadata)
        if RequestReading.ifNoneMatch(request, matches: etag) {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        let version = String(served.versionNumber)
        if let clientETag, RequestReading.bareETag(clientETag) == RequestReading.bareETag(etag) {
            return JSONResponse.make(
                text: #"{"state":"NO_CHANGE","templateVersion":"\#(version)"}"#,
                headers: [.eTag: etag]
            )
        }
        response.append(contentsOf: #","templateVersion":"\#(version)","metadata":"#.utf8)
        response.append(contentsOf: metadata)
        response.append(UInt8(ascii: "}"))
        return Response(
            status: .ok,
            headers: [.eTag: etag, .contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: response))
        )
    }
}
