import Hummingbird
import NIOCore
import VaneCore
import VaneServerCore

/// An error answered in Google's envelope, as Firebase's REST API does:
/// `{"error": {"code": 412, "status": "FAILED_PRECONDITION", "message": "…", "details": [...]}}`.
struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    var status: HTTPResponse.Status
    /// Google's canonical status name.
    var canonicalStatus: String
    /// What went wrong and what to do.
    var message: String
    /// Per-problem details (JSON path, rule, message), for validation errors.
    var details: [ValidationIssue]
    /// Extra response headers (`Retry-After`).
    var headers: HTTPFields

    /// Creates an error.
    init(
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
    static func invalidArgument(_ message: String, details: [ValidationIssue] = []) -> APIError {
        APIError(.badRequest, "INVALID_ARGUMENT", message, details: details)
    }

    /// 401 UNAUTHENTICATED.
    static func unauthenticated(_ message: String) -> APIError {
        APIError(.unauthorized, "UNAUTHENTICATED", message, headers: [.wwwAuthenticate: "Bearer"])
    }

    /// 403 PERMISSION_DENIED.
    static func permissionDenied(_ message: String) -> APIError {
        APIError(.forbidden, "PERMISSION_DENIED", message)
    }

    /// 404 NOT_FOUND.
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "NOT_FOUND", message) }

    /// 409 ALREADY_EXISTS.
    static func alreadyExists(_ message: String) -> APIError { APIError(.conflict, "ALREADY_EXISTS", message) }

    /// 412 FAILED_PRECONDITION.
    static func failedPrecondition(_ message: String) -> APIError {
        APIError(.preconditionFailed, "FAILED_PRECONDITION", message)
    }

    /// 413 PAYLOAD_TOO_LARGE.
    static func payloadTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is larger than \(limit) bytes")
    }

    /// 429 RESOURCE_EXHAUSTED with `Retry-After`, naming the limit that refused.
    static func rateLimited(_ refusal: RateLimiter.Refusal) -> APIError {
        let who: String
        switch refusal.scope {
        case .client: who = "this client (this address with this context)"
        case .address: who = "this address"
        case .key: who = "all clients of this key together"
        }
        return APIError(
            .tooManyRequests,
            "RESOURCE_EXHAUSTED",
            "\(who) sent too many requests; retry after \(refusal.retryAfterSeconds) s",
            headers: [.retryAfter: String(refusal.retryAfterSeconds)]
        )
    }

    /// 429 RESOURCE_EXHAUSTED: too many event streams open.
    static func tooManyStreams(_ refusal: StreamHub.Refusal) -> APIError {
        APIError(
            .tooManyRequests,
            "RESOURCE_EXHAUSTED",
            refusal.message,
            headers: [.retryAfter: String(StreamHub.Refusal.retryAfterSeconds)]
        )
    }

    /// 503 UNAVAILABLE with `Retry-After`: the database is busy; the request changed nothing.
    static func storageBusy() -> APIError {
        APIError(
            .serviceUnavailable,
            "UNAVAILABLE",
            "the database is busy (another process holds its write lock); nothing was changed. "
                + "Retry after \(StorageError.busyRetryAfterSeconds) s",
            headers: [.retryAfter: String(StorageError.busyRetryAfterSeconds)]
        )
    }

    /// The envelope as JSON.
    var json: JSONValue {
        ErrorEnvelope(
            code: Int(status.code),
            status: canonicalStatus,
            message: message,
            details: details.map { issue in
                ErrorEnvelope.Detail(
                    path: issue.path.description,
                    rule: issue.rule,
                    severity: issue.severity.rawValue,
                    message: issue.message
                )
            }
        ).json()
    }

    /// The error response.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = JSONResponse.make(json, status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

extension APIError {
    /// 403 PERMISSION_DENIED for a key that may not do this.
    init(_ denied: AccessDenied) {
        self = .permissionDenied(denied.message)
    }

    /// 400 INVALID_ARGUMENT for a body the endpoint cannot read.
    init(_ error: RequestBodyError) {
        self = .invalidArgument(error.message, details: error.details)
    }

    /// Maps a refused publish to its HTTP answer.
    init(_ error: PublishError) {
        switch error {
        case .invalid(let issues):
            let errors = issues.filter { $0.severity == .error }.count
            self = .invalidArgument(
                "the template is invalid: \(errors) error(s); nothing was published",
                details: issues
            )
        case .doesNotCompile(let failure):
            self = .invalidArgument(
                "the template does not compile: \(failure.issues.count) condition(s) do not parse; nothing was published",
                details: failure.issues
            )
        case .storage(let error):
            self = APIError(error)
        case .invalidRollback(let message):
            self = .invalidArgument(message)
        case .changeRefused(let refusal):
            self = APIError(refusal)
        }
    }

    /// 409 with the refusal's code when a change request is needed, not approved, suspended or
    /// changed since it was reviewed; 404, 412 and 403 for the rest.
    init(_ refusal: ChangeRefusal) {
        switch refusal {
        case .changeRequestRequired, .notApproved, .suspended, .hashMismatch:
            self.init(.conflict, refusal.code, refusal.description)
        case .notFound: self = .notFound(refusal.description)
        case .state: self = .failedPrecondition(refusal.description)
        case .notAllowed: self = .permissionDenied(refusal.description)
        }
    }

    /// Maps a storage error to its HTTP answer.
    init(_ error: StorageError) {
        switch error {
        case .projectExists, .environmentExists, .userExists, .experimentExists, .rolloutExists:
            self = .alreadyExists(error.description)
        case .projectNotFound, .environmentNotFound, .versionNotFound, .keyNotFound, .userNotFound, .experimentNotFound,
            .rolloutNotFound, .webhookEndpointNotFound, .webhookMessageNotFound:
            self = .notFound(error.description)
        case .versionConflict, .experimentStatus, .parameterInRunningExperiment, .rolloutState:
            self = .failedPrecondition(error.description)
        case .invalidPageToken: self = .invalidArgument(error.description)
        case .cannotOpen, .schemaTooNew: self = APIError(.serviceUnavailable, "UNAVAILABLE", error.description)
        case .busy: self = .storageBusy()
        }
    }
}

/// Routes call ``Principal/require(_:on:)`` as they are: a refusal thrown from a handler answers
/// as the ``APIError`` it maps to.
extension AccessDenied: APIErrorMapped {
    /// 403 PERMISSION_DENIED.
    var apiError: APIError { APIError(self) }
}

extension APIError {
    /// 412 FAILED_PRECONDITION, with the problems.
    init(_ refusal: ExperimentStartRefusal) {
        self.init(.preconditionFailed, "FAILED_PRECONDITION", refusal.description, details: refusal.issues)
    }
}

extension ExperimentStartRefusal: APIErrorMapped {
    /// 412 FAILED_PRECONDITION.
    var apiError: APIError { APIError(self) }
}

/// A storage failure thrown from a handler answers as the ``APIError`` it maps to (404 for a
/// missing project, 409 for a taken id, 503 for a busy database …), so routes need not wrap it.
extension StorageError: APIErrorMapped {
    /// See ``APIError/init(_:)``.
    var apiError: APIError { APIError(self) }
}

extension APIError {
    /// 404 for a missing flag, 412 for a version that is no longer live, 400 otherwise.
    init(_ refusal: FlagSwitchRefusal) {
        switch refusal {
        case .noSuchFlag: self = .notFound(refusal.description)
        case .versionMoved: self = .failedPrecondition(refusal.description)
        case .notBoolean, .position, .noMessage: self = .invalidArgument(refusal.description)
        }
    }
}

extension PublishError: APIErrorMapped {
    /// See ``APIError/init(_:)``: 400 for a template that is refused, the storage error's answer otherwise.
    var apiError: APIError { APIError(self) }
}

extension ChangeRefusal: APIErrorMapped {
    /// See ``APIError/init(_:)``.
    var apiError: APIError { APIError(self) }
}

extension FlagSwitchRefusal: APIErrorMapped {
    /// See ``APIError/init(_:)``.
    var apiError: APIError { APIError(self) }
}

extension ConditionRenameRefusal: APIErrorMapped {
    /// 404 for a missing condition, 400 for a bad name.
    var apiError: APIError { APIError(self) }
}

extension APIError {
    /// 404 for a missing condition, 400 for a bad name.
    init(_ refusal: ConditionRenameRefusal) {
        switch refusal {
        case .noSuchCondition: self = .notFound(refusal.description)
        case .badName: self = .invalidArgument(refusal.description)
        }
    }
}

extension RebaseRefusal: APIErrorMapped {
    /// 400 INVALID_ARGUMENT: the base version or a choice does not fit.
    var apiError: APIError { .invalidArgument(description) }
}

/// An error a handler may throw as it is: it answers as the ``APIError`` it maps to, so routes need
/// not wrap it. Conforming takes only the mapping.
protocol APIErrorMapped: HTTPResponseError {
    /// The answer this error gives.
    var apiError: APIError { get }
}

extension APIErrorMapped {
    /// The mapped status.
    var status: HTTPResponse.Status { apiError.status }

    /// The error envelope.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        try apiError.response(from: request, context: context)
    }
}

extension FlagCopyRefusal: APIErrorMapped {
    /// 404 for a missing flag, 412 for a condition that differs in the target, 400 otherwise.
    var apiError: APIError {
        switch self {
        case .noSuchFlag: .notFound(description)
        case .conditionDiffers, .flagExists: .failedPrecondition(description)
        case .sameEnvironment: .invalidArgument(description)
        }
    }
}
