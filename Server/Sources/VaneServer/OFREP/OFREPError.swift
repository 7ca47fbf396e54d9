import Hummingbird
import VaneCore
import VaneServerCore

/// An OFREP error answer, shaped as the OpenFeature Remote Evaluation Protocol prescribes rather
/// than in Google's envelope: `evaluationFailure` / `flagNotFound` (`{key, errorCode,
/// errorDetails}`) for one flag, `bulkEvaluationFailure` (`{errorCode, errorDetails}`) for bulk,
/// `generalErrorResponse` for 500, and no body for 401, 403 and 429.
struct OFREPError: HTTPResponseError, Sendable {
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// The JSON body, or nil for an empty one.
    var body: JSONObject?
    /// Extra response headers (`WWW-Authenticate`, `Retry-After`).
    var headers: HTTPFields

    /// OFREP's error codes (OpenFeature's vocabulary, those OFREP lets travel).
    enum Code: String, Sendable {
        /// The body is not valid JSON.
        case parseError = "PARSE_ERROR"
        /// The context has a member Vane cannot use.
        case invalidContext = "INVALID_CONTEXT"
        /// Anything else: the flag's value cannot be served, a header is missing.
        case general = "GENERAL"
        /// No such flag.
        case flagNotFound = "FLAG_NOT_FOUND"
    }

    /// 401 with no body: the key is missing, unknown or revoked.
    static let unauthorized = OFREPError(status: .unauthorized, body: nil, headers: [.wwwAuthenticate: "Bearer"])

    /// 403 with no body: the key may not evaluate this environment.
    static let forbidden = OFREPError(status: .forbidden, body: nil, headers: [:])

    /// 429 with no body and `Retry-After` in whole seconds (the form every provider can parse).
    static func rateLimited(retryAfterSeconds: Int) -> OFREPError {
        OFREPError(status: .tooManyRequests, body: nil, headers: [.retryAfter: String(retryAfterSeconds)])
    }

    /// 400: `evaluationFailure` when `flagKey` is given (single-flag endpoint), else
    /// `bulkEvaluationFailure`.
    static func badRequest(_ code: Code, _ details: String, flagKey: String?) -> OFREPError {
        OFREPError(status: .badRequest, body: failureBody(code, details, flagKey: flagKey), headers: [:])
    }

    /// 404 `flagNotFound`.
    static func flagNotFound(_ flagKey: String, _ details: String) -> OFREPError {
        OFREPError(status: .notFound, body: failureBody(.flagNotFound, details, flagKey: flagKey), headers: [:])
    }

    /// 500 `generalErrorResponse`.
    static let internalFailure = OFREPError(
        status: .internalServerError,
        body: ["errorDetails": "the server failed to evaluate the request; see its log"],
        headers: [:]
    )

    /// `{key?, errorCode, errorDetails}`.
    static func failureBody(_ code: Code, _ details: String, flagKey: String?) -> JSONObject {
        var body = JSONObject()
        if let flagKey { body["key"] = .string(flagKey) }
        body["errorCode"] = .string(code.rawValue)
        body["errorDetails"] = .string(details)
        return body
    }

    /// The error response.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        guard let body else { return Response(status: status, headers: headers) }
        return JSONResponse.make(.object(body), status: status, headers: headers)
    }
}
