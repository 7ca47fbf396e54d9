import Hummingbird
import NIOCore
import VaneCore

/// An error answered in Google's envelope, as Firebase's REST API does:
/// `{"error": {"code": 412, "status": "FAILED_PRECONDITION", "message": "…", "details": [...]}}`.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// Google's canonical status name.
    public var canonicalStatus: String
    /// What went wrong and what to do.
    public var message: String
    /// Per-problem details (JSON path, rule, message), for validation errors.
    public var details: [ValidationIssue]
    /// Extra response headers (`Retry-After`).
    public var headers: HTTPFields

    /// Creates an error.
    public init(
        _ status: HTTPResponse.Status,
        _ canonicalStatus: String,
        _ message: String,
        details: [ValidationIssue] = [],
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.canonicalStatus = canonicalStatus
        self.message = message
        self.details = details
        self.headers = headers
    }

    /// 400 INVALID_ARGUMENT.
    public static func invalidArgument(_ message: String, details: [ValidationIssue] = []) -> APIError {
        APIError(.badRequest, "INVALID_ARGUMENT", message, details: details)
    }

    /// 401 UNAUTHENTICATED.
    public static func unauthenticated(_ message: String) -> APIError {
        APIError(.unauthorized, "UNAUTHENTICATED", message, headers: [.wwwAuthenticate: "Bearer"])
    }

    /// 403 PERMISSION_DENIED.
    public static func permissionDenied(_ message: String) -> APIError {
        APIError(.forbidden, "PERMISSION_DENIED", message)
    }

    /// 404 NOT_FOUND.
    public static func notFound(_ message: String) -> APIError { APIError(.notFound, "NOT_FOUND", message) }

    /// 409 ALREADY_EXISTS.
    public static func alreadyExists(_ message: String) -> APIError { APIError(.conflict, "ALREADY_EXISTS", message) }

    /// 412 FAILED_PRECONDITION.
    public static func failedPrecondition(_ message: String) -> APIError {
        APIError(.preconditionFailed, "FAILED_PRECONDITION", message)
    }

    /// 413 PAYLOAD_TOO_LARGE.
    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is larger than \(limit) bytes")
    }

    /// 429 RESOURCE_EXHAUSTED with `Retry-After`.
    public static func rateLimited(retryAfterSeconds: Int) -> APIError {
        APIError(
            .tooManyRequests,
            "RESOURCE_EXHAUSTED",
            "this key sent too many requests; retry after \(retryAfterSeconds) s",
            headers: [.retryAfter: String(retryAfterSeconds)]
        )
    }

    /// The envelope as JSON.
    public var json: JSONValue {
        var error: JSONObject = [
            "code": .number(JSONNumber(Int(status.code))), "status": .string(canonicalStatus),
            "message": .string(message),
        ]
        if !details.isEmpty {
            error["details"] = .array(
                details.map { issue in
                    [
                        "path": .string(issue.path.description), "rule": .string(issue.rule),
                        "severity": .string(issue.severity.rawValue),
                        "message": .string(issue.message),
                    ]
                }
            )
        }
        return ["error": .object(error)]
    }

    /// The error response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(json, status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

extension APIError {
    /// Maps a storage error to its HTTP answer.
    init(_ error: StorageError) {
        switch error {
        case .projectExists, .environmentExists: self = .alreadyExists(error.description)
        case .projectNotFound, .environmentNotFound, .versionNotFound, .keyNotFound: self = .notFound(error.description)
        case .versionConflict: self = .failedPrecondition(error.description)
        case .invalidPageToken: self = .invalidArgument(error.description)
        case .cannotOpen, .schemaTooNew: self = APIError(.serviceUnavailable, "UNAVAILABLE", error.description)
        }
    }
}

/// JSON responses from ``JSONValue``s.
public enum JSONResponse {
    /// A JSON response.
    public static func make(_ json: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response
    {
        make(text: json.serialized(.compact), status: status, headers: headers)
    }

    /// A JSON response from already-serialized text.
    public static func make(text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
