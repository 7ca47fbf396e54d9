import Hummingbird
import Logging
import VaneCore
import VaneServerCore

/// The OpenFeature Remote Evaluation Protocol core: `POST /ofrep/v1/evaluate/flags/{key}` and
/// `POST /ofrep/v1/evaluate/flags`, evaluated from memory like client fetch.
///
/// These routes authenticate on their own (register them before ``AuthenticationMiddleware``):
/// OFREP answers 401 and 403 with no body, not Google's envelope. They share the fetch
/// endpoint's ``RateLimiter``, so a key has one budget for both.
struct OFREPRoutes {
    let keys: KeyIndex
    let cache: ServingCache
    let limiter: RateLimiter
    let eventStreams: OFREPStreamRoutes

    func register(on router: Router<VaneRequestContext>) {
        let group = router.group("ofrep/v1/evaluate")
        group.post("flags", use: evaluateAll)
        group.post("flags/:key", use: evaluateOne)
    }

    /// Single flag: 200 `evaluationSuccess`, 404 `FLAG_NOT_FOUND`, 400 `evaluationFailure`.
    @Sendable func evaluateOne(_ request: Request, context: VaneRequestContext) async throws -> Response {
        guard let flagKey = context.parameters.get("key") else { throw OFREPError.internalFailure }
        return try await answering(context) {
            let (environment, evaluationContext) = try await read(request, context: context, flagKey: flagKey)
            guard let served = cache.template(for: environment) else {
                throw OFREPError.flagNotFound(
                    flagKey,
                    "no template is published for \(environment); publish one that defines \"\(flagKey)\""
                )
            }
            let result = served.compiled.evaluate(served.clientContext(evaluationContext))
            guard let resolution = result.resolution(forKey: flagKey) else {
                throw OFREPError.flagNotFound(
                    flagKey,
                    "the flag \"\(flagKey)\" is not in version \(served.versionNumber) of \(environment)'s template; "
                        + "check the key"
                )
            }
            let evaluation = OFREPEvaluation(resolution, served: served, templateVersion: String(served.versionNumber))
            return JSONResponse.make(.object(evaluation.json), status: evaluation.isFailure ? .badRequest : .ok)
        }
    }

    /// Bulk: every flag in template order, `eventStreams` naming the change stream (see
    /// ``OFREPStreamRoutes``), `ETag` a hash of the `flags` array, 304 on a matching
    /// `If-None-Match`. `flagConfigEtag` and `flagConfigLastModified` are accepted and ignored:
    /// this node always serves the newest version it knows.
    @Sendable func evaluateAll(_ request: Request, context: VaneRequestContext) async throws -> Response {
        try await answering(context) {
            let (principal, environment, evaluationContext) = try await readAuthenticated(
                request,
                context: context,
                flagKey: nil
            )
            var flags: [JSONValue] = []
            var version: Int64 = 0
            if let served = cache.template(for: environment) {
                version = served.versionNumber
                let result = served.compiled.evaluate(served.clientContext(evaluationContext))
                for resolution in result.resolutions {
                    flags.append(.object(OFREPEvaluation(resolution, served: served, templateVersion: nil).json))
                }
            }
            let flagsText = JSONValue.array(flags).serialized()
            let etag = ServedTemplate.resultETag(flagsText)
            if request.headers.ifNoneMatch(matches: etag) {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            var text = #"{"flags":"# + flagsText + #","metadata":{"templateVersion":"\#(version)"}"#
            if let streams = eventStreams.advertisement(
                keyId: principal.id,
                environment: environment,
                version: version
            ) {
                text += #","eventStreams":"# + streams
            }
            text += "}"
            return JSONResponse.make(text: text, headers: [.eTag: etag])
        }
    }

    /// Authenticates, picks the environment, reads the body, applies the rate limits and reads the context, in
    /// that order.
    private func read(
        _ request: Request,
        context: VaneRequestContext,
        flagKey: String?
    ) async throws -> (EnvironmentKey, EvaluationContext) {
        let (_, environment, evaluationContext) = try await readAuthenticated(
            request,
            context: context,
            flagKey: flagKey
        )
        return (environment, evaluationContext)
    }

    private func readAuthenticated(
        _ request: Request,
        context: VaneRequestContext,
        flagKey: String?
    ) async throws -> (Principal, EnvironmentKey, EvaluationContext) {
        let principal = try await OFREPRequest.principal(request, keys: keys)
        let environment = try OFREPRequest.environment(request, principal: principal, flagKey: flagKey)
        let body = try await OFREPRequest.body(request, flagKey: flagKey)
        if let refusal = limiter.acquire(
            keyId: principal.id,
            address: context.clientAddress,
            body: Digest128(hashing: body)
        ) {
            throw OFREPError.rateLimited(retryAfterSeconds: refusal.retryAfterSeconds)
        }
        let evaluationContext = try OFREPRequest.context(bytes: body, flagKey: flagKey)
        return (principal, environment, evaluationContext)
    }

    /// Runs a handler; any error that is not an OFREP answer becomes a logged 500
    /// `generalErrorResponse`.
    private func answering(
        _ context: VaneRequestContext,
        _ body: () async throws -> Response
    ) async throws -> Response {
        do {
            return try await body()
        } catch let error as OFREPError {
            throw error
        } catch {
            context.logger.error("OFREP evaluation failed", metadata: ["error": "\(String(describing: error))"])
            throw OFREPError.internalFailure
        }
    }
}
